// Package nsys reads Nsight Systems SQLite exports (`nsys export --type
// sqlite`): CUDA kernels, memcpy and memset activity, CUDA runtime calls and
// NVTX ranges, with the device and session facts around them.
//
// The export's schema is NVIDIA's "SQLite Export Schema Reference"; columns
// come and go between Nsight versions (shortName / demangledName /
// mangledName, globalPid, graphNodeId), so the reader looks at what each
// table holds, reads what is there, and fails with ErrSchema naming what is
// missing when a column it cannot do without is absent. Tables are created
// lazily by Nsight: a table that is absent simply has no rows.
//
// Times are integer nanoseconds relative to the session start
// (Info.SessionStartNS, the UTC epoch of TARGET_INFO_SESSION_START_TIME).
// The file is opened read-only and immutable: nothing is written beside it.
package nsys

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tracehouse/tracehouse/limits"
	"github.com/tracehouse/tracehouse/parseerr"
	_ "modernc.org/sqlite" // pure-Go SQLite: no cgo for the reader
)

// Causes of a rejected file, matchable with errors.Is.
var (
	// ErrNotSQLite: the file does not start with the SQLite header.
	ErrNotSQLite = errors.New("not a SQLite database")
	// ErrDamaged: a SQLite file that is truncated or that SQLite cannot read.
	ErrDamaged = errors.New("damaged SQLite file")
	// ErrNotExport: a readable SQLite database without Nsight's tables.
	ErrNotExport = errors.New("not an Nsight Systems export")
	// ErrSchema: an Nsight table lacks a column the reader cannot do without.
	ErrSchema = errors.New("unsupported export schema")
	// ErrValue: a row holds a value that cannot be (NULL start, end before start).
	ErrValue = errors.New("bad value")
)

// Table names of the export that the reader uses.
const (
	TableStrings     = "StringIds"
	TableKernel      = "CUPTI_ACTIVITY_KIND_KERNEL"
	TableMemcpy      = "CUPTI_ACTIVITY_KIND_MEMCPY"
	TableMemset      = "CUPTI_ACTIVITY_KIND_MEMSET"
	TableRuntime     = "CUPTI_ACTIVITY_KIND_RUNTIME"
	TableNVTX        = "NVTX_EVENTS"
	TableGPU         = "TARGET_INFO_GPU"
	TableCUDADevice  = "TARGET_INFO_CUDA_DEVICE"
	TableSessionTime = "TARGET_INFO_SESSION_START_TIME"
	TableMeta        = "META_DATA_EXPORT"
	TableEventTypes  = "ENUM_NSYS_EVENT_TYPE"
)

// nsysTables are tables only an Nsight export has: one of them besides
// StringIds makes a SQLite file an export.
var nsysTables = []string{TableKernel, TableMemcpy, TableMemset, TableRuntime, TableNVTX,
	TableGPU, TableCUDADevice, TableSessionTime, TableMeta, TableEventTypes}

// sqliteMagic starts every SQLite 3 database file.
const sqliteMagic = "SQLite format 3\x00"

// IsSQLite reports whether the file at path starts with the SQLite header.
func IsSQLite(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [len(sqliteMagic)]byte
	_, err = io.ReadFull(f, b[:])
	return err == nil && string(b[:]) == sqliteMagic
}

// Export is an open Nsight Systems SQLite export.
type Export struct {
	path    string
	db      *sql.DB
	columns map[string][]string // table -> its columns, for tables that exist
	strs    map[int64]string
	str     *sql.Stmt
	// base is the session start ReadInfo read: every start and end must
	// stay a time the warehouse keeps once it is added.
	base int64
	// repaired counts strings whose invalid UTF-8 was replaced.
	repaired int64
}

// Repaired is how many strings read so far had invalid UTF-8, each
// replaced by U+FFFD (the warehouse holds UTF-8 only).
func (e *Export) Repaired() int64 { return e.repaired }

// validString repairs s for the warehouse, counting it.
func (e *Export) validString(s string) string {
	s, fixed := limits.ValidString(s)
	if fixed {
		e.repaired++
	}
	return s
}

// Open opens the export at path read-only and checks that it is one: a
// SQLite file (else ErrNotSQLite), whole (else ErrDamaged), with StringIds
// and at least one other table of Nsight's (else ErrNotExport). Errors are
// *parseerr.Error naming path.
func Open(ctx context.Context, path string) (*Export, error) {
	if err := checkHeader(path); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fail(path, "", "", err)
	}
	// A URI with immutable=1: SQLite takes no lock and writes no journal
	// beside a file it is told never changes.
	dsn := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "mode=ro&immutable=1"}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fail(path, "", "", parseerr.Errorf(ErrDamaged, "open: %v", err))
	}
	// One connection scans a table while a second looks up its strings.
	db.SetMaxOpenConns(2)
	e := &Export{path: path, db: db, columns: map[string][]string{}, strs: map[int64]string{}}
	if err := e.readCatalog(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return e, nil
}

// Close closes the database.
func (e *Export) Close() error {
	if e.str != nil {
		e.str.Close()
	}
	return e.db.Close()
}

// Path is the file as Open was given it.
func (e *Export) Path() string { return e.path }

// HasTable reports whether the export holds table.
func (e *Export) HasTable(table string) bool { _, ok := e.columns[table]; return ok }

// HasColumn reports whether table exists and has column.
func (e *Export) HasColumn(table, column string) bool {
	return slices.Contains(e.columns[table], column)
}

// Tables lists the export's tables, sorted.
func (e *Export) Tables() []string {
	out := make([]string, 0, len(e.columns))
	for t := range e.columns {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// checkHeader rejects files that are not SQLite or that are shorter than
// their header says (a truncated copy: SQLite itself would only notice when
// a query reaches a missing page).
func checkHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fail(path, "", "", unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail(path, "", "", unwrapPath(err))
	}
	var h [100]byte
	n, _ := io.ReadFull(f, h[:])
	if n < len(sqliteMagic) || string(h[:len(sqliteMagic)]) != sqliteMagic {
		return fail(path, "", "", parseerr.Errorf(ErrNotSQLite, "not a SQLite database (no \"SQLite format 3\" header)"))
	}
	if n < len(h) {
		return fail(path, "", "", parseerr.Errorf(ErrDamaged, "damaged SQLite file: truncated inside its 100-byte header (%d bytes)", n))
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	// The page count is valid when the version-valid-for number matches the
	// change counter (SQLite 3.7.0 and later write both).
	valid := binary.BigEndian.Uint32(h[92:96]) == binary.BigEndian.Uint32(h[24:28])
	if want := pageSize * pages; valid && pages > 0 && st.Size() < want {
		return fail(path, "", "", parseerr.Errorf(ErrDamaged,
			"damaged SQLite file: truncated: its header says %d pages of %d bytes (%d bytes), the file has %d bytes",
			pages, pageSize, want, st.Size()))
	}
	return nil
}

// readCatalog lists tables and their columns, and decides whether the file
// is an export.
func (e *Export) readCatalog(ctx context.Context) error {
	rows, err := e.db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		return e.damaged("sqlite_master", err)
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return e.damaged("sqlite_master", err)
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return e.damaged("sqlite_master", err)
	}
	hasNsys := slices.ContainsFunc(nsysTables, func(t string) bool { return slices.Contains(tables, t) })
	if !slices.Contains(tables, TableStrings) || !hasNsys {
		return fail(e.path, "", "", parseerr.Errorf(ErrNotExport,
			"not an Nsight Systems export: no %s and %s tables (it has %s)", TableStrings, TableKernel, listSome(tables)))
	}
	for _, t := range tables {
		if t != TableStrings && !slices.Contains(nsysTables, t) {
			continue
		}
		cols, err := e.tableColumns(ctx, t)
		if err != nil {
			return err
		}
		e.columns[t] = cols
	}
	if !e.HasColumn(TableStrings, "id") || !e.HasColumn(TableStrings, "value") {
		return fail(e.path, TableStrings, "", parseerr.Errorf(ErrSchema, "want columns id and value, it has %s", listSome(e.columns[TableStrings])))
	}
	return nil
}

func (e *Export) tableColumns(ctx context.Context, table string) ([]string, error) {
	return oneColumn[string](ctx, e, table, `SELECT name FROM pragma_table_info(?)`, table)
}

// oneColumn reads the one column of q's rows (from table, named when the
// export is damaged).
func oneColumn[T any](ctx context.Context, e *Export, table, q string, args ...any) ([]T, error) {
	rows, err := e.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, e.damaged(table, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, e.damaged(table, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, e.damaged(table, err)
	}
	return out, nil
}

// String returns StringIds' value for id, cached.
func (e *Export) String(ctx context.Context, id int64) (string, error) {
	if s, ok := e.strs[id]; ok {
		return s, nil
	}
	if e.str == nil {
		st, err := e.db.PrepareContext(ctx, `SELECT value FROM StringIds WHERE id = ?`)
		if err != nil {
			return "", e.damaged(TableStrings, err)
		}
		e.str = st
	}
	var s string
	err := e.str.QueryRowContext(ctx, id).Scan(&s)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", fail(e.path, TableStrings, "", parseerr.Errorf(ErrValue, "no string with id %d", id))
	case err != nil:
		return "", e.damaged(TableStrings, err)
	}
	s = e.validString(s)
	e.strs[id] = s
	return s, nil
}

// damaged wraps an error SQLite gave while reading table.
func (e *Export) damaged(table string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pe *parseerr.Error
	if errors.As(err, &pe) {
		return err
	}
	return fail(e.path, table, "", parseerr.Errorf(ErrDamaged, "damaged SQLite file: %s", sqliteMessage(err)))
}

// sqliteMessage keeps SQLite's own words and drops the driver's codes.
func sqliteMessage(err error) string {
	s := err.Error()
	// modernc reports "<words> (<code>)"; the code says nothing more.
	if i := strings.LastIndex(s, " ("); i > 0 && strings.HasSuffix(s, ")") {
		s = s[:i]
	}
	return s
}

func fail(path, entry, field string, err error) error {
	return parseerr.AtLine(path, 0, entry, field, err)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// listSome names up to five items.
func listSome(items []string) string {
	switch {
	case len(items) == 0:
		return "none"
	case len(items) <= 5:
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:5], ", ") + fmt.Sprintf(", ... (%d in all)", len(items))
}
