// Package schema opens the warehouse, applies the embedded migrations and
// the SQL library (package sqllib: every macro and view) and names the
// tables and views the rest of tracehouse uses.
package schema

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/tracehouse/tracehouse/migrations"
)

// Memory is the path of a throw-away in-memory warehouse.
const Memory = ":memory:"

// disabledCompression are the storage compressions a writer does not try.
const disabledCompression = "fsst,zstd"

// LockedError reports a warehouse another process holds open for writing.
type LockedError struct {
	Path  string
	Owner string // "PID 1234" when DuckDB said so
}

func (e *LockedError) Error() string {
	msg := fmt.Sprintf("warehouse %s is locked by another tracehouse process", e.Path)
	if e.Owner != "" {
		msg += " (" + e.Owner + ")"
	}
	return msg + ": wait for it to finish"
}

// Options tune Open.
type Options struct {
	// ReadOnly opens the file so other readers can share it; pending
	// migrations are still applied first (briefly opening it for writing).
	ReadOnly bool
	// Migrations replaces the embedded migrations (tests).
	Migrations fs.FS
	// Threads caps the threads DuckDB works a query with (the caller and
	// Threads - 1 workers); 0 is one per core. Small warehouses on a shared
	// machine (tests, CI) gain nothing from a second thread but its
	// coordination.
	Threads int
	// CheckpointBytes is the size of write-ahead log past which a commit
	// checkpoints the file (DuckDB's checkpoint_threshold); 0 keeps
	// DuckDB's 16 MiB. Tests of a disk filling at a checkpoint set it
	// low, so that a few small traces reach it rather than 16 MiB of log.
	CheckpointBytes int64
	// NoTemplate makes an in-memory warehouse, or a new file, run the
	// migrations instead of copying the embedded template of their result
	// (the test that checks the template against them).
	NoTemplate bool
	// MustExist refuses a file that does not exist (*NoWarehouseError)
	// instead of creating it, as ReadOnly always does: only what ingests
	// creates a warehouse, so a mistyped path leaves nothing behind.
	MustExist bool
	// Lake is the lake directory an in-memory warehouse stands for
	// (lake.Open): every connection sets the variable tracehouse_lake to
	// it, which tells the SQL library that the tables never change (its
	// fingerprints are then constant).
	Lake string
}

// NoWarehouseError is a warehouse file that does not exist, opened by
// something that does not create one.
type NoWarehouseError struct{ Path string }

func (e *NoWarehouseError) Error() string { return "no warehouse at " + e.Path }

// NotWarehouseError is a file that is not a tracehouse warehouse: not a
// DuckDB database, or one without tracehouse's tables.
type NotWarehouseError struct{ Path, Why string }

func (e *NotWarehouseError) Error() string {
	return fmt.Sprintf("%s is not a tracehouse warehouse (%s)", e.Path, e.Why)
}

// duckDBMagic is what a DuckDB database file holds at byte 8 (after the
// header block's checksum).
const duckDBMagic = "DUCK"

// checkFile refuses, before DuckDB sees it, a path that is not a warehouse
// file: DuckDB would open anything else as a new in-memory database (a
// read-only open then fails with a message about memory) or try to load an
// extension for it (a SQLite file). A missing file is refused when it must
// exist; a missing or empty one is otherwise created.
func checkFile(path string, mustExist bool) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		if mustExist {
			return &NoWarehouseError{Path: path}
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("open warehouse %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("open warehouse %s: %w", path, err)
	}
	switch {
	case st.IsDir():
		return &NotWarehouseError{Path: path, Why: "a directory"}
	case !st.Mode().IsRegular():
		return &NotWarehouseError{Path: path, Why: "not a regular file"}
	case st.Size() == 0 && !mustExist:
		return nil
	}
	head := make([]byte, 12)
	if _, err := io.ReadFull(f, head); err != nil || string(head[8:12]) != duckDBMagic {
		what := "not a DuckDB database file"
		if bytes.HasPrefix(head, []byte("SQLite format")) {
			what = "a SQLite file, not a DuckDB database"
		}
		return &NotWarehouseError{Path: path, Why: what}
	}
	return nil
}

// checkOurs refuses a DuckDB database that holds tables but none of
// tracehouse's (migrating it would fill someone else's database with ours).
func checkOurs(ctx context.Context, db *sql.DB, path string) error {
	if _, ok := storedVersion(ctx, db); ok {
		return nil
	}
	var ours bool
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FILTER (table_name = 'schema_migrations' AND schema_name = 'main') > 0,
		count(*) FROM duckdb_tables() WHERE NOT internal`).Scan(&ours, &n); err != nil {
		return fmt.Errorf("open warehouse %s: %w", path, err)
	}
	if !ours && n > 0 {
		return &NotWarehouseError{Path: path, Why: "a DuckDB database without tracehouse's tables"}
	}
	return nil
}

// Warehouse is an open warehouse.
type Warehouse struct {
	DB       *sql.DB
	Path     string
	ReadOnly bool
	// Lake is the lake directory when the tables are views over its
	// Parquet files (lake.Open): read-only, written by 'ingest --lake'.
	Lake string
	// rows finds the sources of InsertRows calls in progress
	rows *rowSources
	// cleanup removes what Open made for the warehouse besides the
	// database (an in-memory warehouse's file), after closing it.
	cleanup func() error
}

// Close closes the database.
func (w *Warehouse) Close() error {
	err := w.DB.Close()
	if w.cleanup != nil {
		err = errors.Join(err, w.cleanup())
	}
	return err
}

// Open opens (creating if needed) the warehouse at path and brings its schema
// up to date: pending migrations, then the SQL library (package sqllib)
// when the warehouse's differs from this binary's. A read-only open never
// writes the library: when the stored one is stale, every connection
// creates the library as TEMP macros and views, which shadow the stored
// ones (the next writable open stores it).
func Open(ctx context.Context, path string, opt Options) (*Warehouse, error) {
	src := opt.Migrations
	if src == nil {
		src = migrations.FS
	}
	// The library names the tables the embedded migrations make; a test's
	// own migrations get none.
	withLibrary := opt.Migrations == nil
	// Their names first (a bad one is an error before the file is
	// touched); their SQL only when the warehouse is not current.
	names, err := listMigrations(src)
	if err != nil {
		return nil, err
	}
	if path == "" {
		path = Memory
	}
	if path != Memory {
		if err := checkFile(path, opt.MustExist || opt.ReadOnly); err != nil {
			return nil, err
		}
	}
	if path != Memory && opt.Migrations == nil && !opt.NoTemplate {
		createFromTemplate(path)
	}
	init := lakeVariable(opt.Lake)
	readOnly := opt.ReadOnly && path != Memory
	if readOnly {
		// A file that needs migrating is opened for writing once first.
		w, err := open(path, true, opt, init)
		if err == nil && withLibrary && upToDate(ctx, w.DB, len(names)) {
			return w, nil
		}
		ms, lerr := LoadMigrations(src)
		if lerr != nil {
			if err == nil {
				w.Close()
			}
			return nil, lerr
		}
		if err == nil {
			if err := checkOurs(ctx, w.DB, path); err != nil {
				w.Close()
				return nil, err
			}
			pending, perr := Pending(ctx, w.DB, ms)
			if perr == nil && len(pending) == 0 {
				hash, lerr := libraryHash()
				if lerr != nil {
					w.Close()
					return nil, lerr
				}
				if !withLibrary || libraryCurrent(ctx, w.DB, hash) {
					return w, nil
				}
				w.Close()
				return open(path, true, opt, chainInit(init, tempLibrary))
			}
			w.Close()
			if perr != nil {
				var ne *NewerError
				if errors.As(perr, &ne) {
					return nil, perr
				}
			}
		}
		rw, err := open(path, false, opt, init)
		if err != nil {
			return nil, err
		}
		if err := migrate(ctx, rw.DB, ms, withLibrary); err != nil {
			rw.Close()
			return nil, err
		}
		if err := rw.Close(); err != nil {
			return nil, fmt.Errorf("close %s: %w", path, err)
		}
		return open(path, true, opt, init)
	}
	if path == Memory && opt.Migrations == nil && !opt.NoTemplate {
		ms, err := LoadMigrations(src)
		if err != nil {
			return nil, err
		}
		return openTemplate(ctx, ms, opt, init)
	}
	w, err := open(path, false, opt, init)
	if err != nil {
		return nil, err
	}
	// A current warehouse (every file made from the template is) needs
	// neither the migrations' text nor the library split into statements:
	// one query says so. Splitting the library was about 2% of a small
	// ingest's CPU, the three queries it replaces about 1.5 ms.
	if withLibrary && upToDate(ctx, w.DB, len(names)) {
		return w, nil
	}
	ms, err := LoadMigrations(src)
	if err != nil {
		w.Close()
		return nil, err
	}
	if err := checkOurs(ctx, w.DB, path); err != nil {
		w.Close()
		return nil, err
	}
	if err := migrate(ctx, w.DB, ms, withLibrary); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// upToDate says, in one query, whether a warehouse holds every one of the
// latest migrations and this binary's SQL library: what a read-only open
// of a current warehouse checks, which otherwise takes three queries
// (checkOurs, Pending, libraryCurrent). False sends the caller through
// those, which also say why.
func upToDate(ctx context.Context, db *sql.DB, latest int) bool {
	hash, err := libraryHash()
	if err != nil {
		return false
	}
	var v sql.NullInt64
	var h sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT (SELECT max(version) FROM main.schema_migrations), `+hashMacro+`()`).Scan(&v, &h); err != nil {
		return false
	}
	return v.Valid && int(v.Int64) == latest && h.String == hash
}

// migrate applies the pending migrations, then (withLibrary) the SQL
// library when the warehouse's is not this binary's.
func migrate(ctx context.Context, db *sql.DB, ms []Migration, withLibrary bool) error {
	if _, err := Migrate(ctx, db, ms); err != nil {
		return err
	}
	if withLibrary {
		return applyLibrary(ctx, db)
	}
	return nil
}

// connInit is what every new connection of a warehouse runs first.
type connInit func(driver.ExecerContext) error

// lakeVariable sets tracehouse_lake on a lake's connections (nil: none).
func lakeVariable(dir string) connInit {
	if dir == "" {
		return nil
	}
	return func(e driver.ExecerContext) error {
		_, err := e.ExecContext(context.Background(), "SET VARIABLE tracehouse_lake = "+quote(dir), nil)
		return err
	}
}

// chainInit runs a, then b (either may be nil).
func chainInit(a, b connInit) connInit {
	if a == nil {
		return b
	}
	return func(e driver.ExecerContext) error {
		if err := a(e); err != nil {
			return err
		}
		return b(e)
	}
}

// BlockSize is the storage block size of the warehouses tracehouse creates
// (DuckDB's default is 256 KiB; files keep the size they were made with).
// DuckDB gives every column a transaction appends to, and every column it
// checkpoints, a fresh block: at 256 KiB that was a third of a small
// ingest's CPU. Measured (bench/README.md, "Storage block size"): at 64 KiB
// a 0.6 MB trace's ingest takes 20-25% less CPU, the command tests 4-8%
// less, a 270 MB ingest and the 1 M-kernel triage the same within their
// spread, a 1 GB ingest peaks under its target; at 32 or 16 KiB large
// scans got dearer, and at 16 KiB the 1 GB peak passed its target.
const BlockSize = 65536

// StorageVersion is the DuckDB storage format of the warehouses tracehouse
// creates. DuckDB's default is still the v1.0 format, whose column
// statistics hold the old HyperLogLog: every checkpoint converts each
// column's sketch to it and every open converts it back, which with a
// warehouse's ~30 tables was a fifth of the checkpoint that closes a small
// ingest (perf). The v1.5 format also stores strings as DICT_FSST, validity
// as roaring bitmaps, and doubles as ALP. Measured (bench/README.md,
// "Warehouses in DuckDB's v1.5 storage format"): a 0.6 MB trace's ingest
// into a warehouse about 10% less wall and CPU time, a 270 MB ingest the
// same within its spread and its warehouse 8% smaller. DuckDB 1.5 or later
// (the CLI, Python) opens such a file; older warehouses keep their format.
const StorageVersion = "v1.5.0"

// minAggregateThreads is the thread count from which DuckDB starts each
// hash aggregate with a 32,768-entry table; below it the first table has
// 262,144 entries, 2 MiB zeroed and page-faulted per aggregate per query,
// which was a third of a small report's CPU (perf, DuckDB 1.5).
const minAggregateThreads = 3

// engineThreads returns DuckDB's threads and external_threads settings for
// cores threads of work (0: one per core the process may use), or 0 to
// leave DuckDB's defaults. DuckDB starts threads - external_threads worker
// threads (the calling thread is the one external thread by default), so
// counting the missing threads as external keeps the workers at cores - 1
// while the thread count reaches minAggregateThreads.
func engineThreads(cores int) (threads, external int) {
	asked := cores > 0
	if !asked {
		cores = runtime.GOMAXPROCS(0)
	}
	switch {
	case cores >= minAggregateThreads && asked:
		return cores, 1
	case cores >= minAggregateThreads:
		return 0, 0
	}
	return minAggregateThreads, minAggregateThreads - cores + 1
}

var lockOwner = regexp.MustCompile(`PID \d+`)

func open(path string, readOnly bool, opt Options, init connInit) (*Warehouse, error) {
	dsn := path
	if path == Memory {
		dsn = ""
	}
	// DuckDB would otherwise install (download) and load an extension a
	// statement or a file seems to need: tracehouse never reaches the
	// network on its own, and needs no extension it does not link.
	config := []string{"autoinstall_known_extensions=false", "autoload_known_extensions=false"}
	if readOnly && path != Memory {
		config = append(config, "access_mode=READ_ONLY")
	} else {
		// Only a file created by this open takes the size and the storage
		// version; an existing warehouse keeps the ones in its header.
		config = append(config, "default_block_size="+strconv.Itoa(BlockSize), "storage_compatibility_version="+StorageVersion)
	}
	if n, ext := engineThreads(opt.Threads); n > 0 {
		config = append(config, "threads="+strconv.Itoa(n), "external_threads="+strconv.Itoa(ext))
	}
	if opt.CheckpointBytes > 0 {
		config = append(config, "checkpoint_threshold="+strconv.FormatInt(opt.CheckpointBytes, 10)+"b")
	}
	dsn += "?" + strings.Join(config, "&")
	c, err := duckdb.NewConnector(dsn, init)
	if err != nil {
		return nil, classifyOpenError(path, err)
	}
	db := sql.OpenDB(c)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, classifyOpenError(path, err)
	}
	if !readOnly {
		// A checkpoint tries every compression on every column segment it
		// writes. FSST and zstd never win here (strings are interned into
		// the name tables; the rest are ids and times), and trying them
		// was a third of the checkpoint that closes a small ingest. (The
		// connector's config string takes this setting without applying
		// it, hence the statement.) DICT_FSST, the string compression of
		// the v1.5 format (StorageVersion), stays: without it strings are
		// stored uncompressed.
		if _, err := db.Exec(`SET GLOBAL disabled_compression_methods = '` + disabledCompression + `'`); err != nil {
			db.Close()
			return nil, fmt.Errorf("open warehouse %s: %w", path, err)
		}
	}
	return &Warehouse{DB: db, Path: path, ReadOnly: readOnly, rows: &rowSources{}}, nil
}

func classifyOpenError(path string, err error) error {
	msg := err.Error()
	if strings.Contains(msg, "Could not set lock") || strings.Contains(msg, "Conflicting lock") {
		return &LockedError{Path: path, Owner: lockOwner.FindString(msg)}
	}
	return fmt.Errorf("open warehouse %s: %w", path, err)
}

// EngineVersion is the version of the DuckDB library linked in (e.g.
// "v1.5.0"), read from a throw-away in-memory database.
func EngineVersion(ctx context.Context) (string, error) {
	w, err := open(Memory, false, Options{}, nil)
	if err != nil {
		return "", err
	}
	defer w.Close()
	var v string
	if err := w.DB.QueryRowContext(ctx, "SELECT version()").Scan(&v); err != nil {
		return "", fmt.Errorf("duckdb version: %w", err)
	}
	return v, nil
}
