package schema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Migration is one numbered SQL file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// NewerError reports a warehouse written by a newer tracehouse.
type NewerError struct {
	Warehouse int // version recorded in the warehouse
	Binary    int // newest version this binary knows
}

func (e *NewerError) Error() string {
	return fmt.Sprintf("warehouse schema version %d is newer than this tracehouse knows (%d): upgrade tracehouse", e.Warehouse, e.Binary)
}

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// LoadMigrations reads NNNN_name.sql files from fsys and checks that they are
// numbered consecutively from 1.
func LoadMigrations(fsys fs.FS) ([]Migration, error) {
	ms, err := listMigrations(fsys)
	if err != nil {
		return nil, err
	}
	for i, m := range ms {
		name := fmt.Sprintf("%04d_%s.sql", m.Version, m.Name)
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		ms[i].SQL = string(body)
	}
	return ms, nil
}

// listMigrations is LoadMigrations without the files' SQL (names and
// versions, checked the same way): all an open of a current warehouse
// needs. Reading the 26 files' 116 kB at every open was 1-4 ms of a
// command's start (perf, issue 38).
func listMigrations(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []Migration
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".sql" {
			continue
		}
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration %s: name must look like 0001_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		ms = append(ms, Migration{Version: v, Name: m[2]})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %04d_%s: expected version %d (versions must be consecutive from 1)", m.Version, m.Name, i+1)
		}
	}
	return ms, nil
}

// Version returns the warehouse's schema version, 0 for an empty database.
func Version(ctx context.Context, db *sql.DB) (int, error) {
	if v, ok := storedVersion(ctx, db); ok {
		return v, nil
	}
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables() WHERE table_name = 'schema_migrations' AND schema_name = 'main'`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return int(v.Int64), nil
}

// storedVersion reads the version from schema_migrations directly, and
// says whether it could (ok false: no such table, or another error, which
// the catalog query of Version then reports). Every open asks twice
// (checkOurs, Pending), and a query of duckdb_tables() (which renders
// every table's CREATE statement and makes the catalog's default entries,
// torn down again at close) cost 10-15 ms of CPU each time, a third of
// opening a small warehouse; this read costs about 1 ms.
func storedVersion(ctx context.Context, db *sql.DB) (int, bool) {
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT max(version) FROM main.schema_migrations`).Scan(&v); err != nil {
		return 0, false
	}
	return int(v.Int64), true
}

// Pending returns the migrations not yet applied, or a *NewerError.
func Pending(ctx context.Context, db *sql.DB, ms []Migration) ([]Migration, error) {
	v, err := Version(ctx, db)
	if err != nil {
		return nil, err
	}
	latest := len(ms)
	if v > latest {
		return nil, &NewerError{Warehouse: v, Binary: latest}
	}
	return ms[v:], nil
}

// Migrate applies pending migrations, each with its version row in one
// transaction, and returns how many it applied.
func Migrate(ctx context.Context, db *sql.DB, ms []Migration) (int, error) {
	pending, err := Pending(ctx, db, ms)
	if err != nil {
		return 0, err
	}
	if len(pending) == 0 {
		return 0, nil
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)`); err != nil {
		return 0, fmt.Errorf("create schema_migrations: %w", err)
	}
	for i, m := range pending {
		if err := apply(ctx, db, m); err != nil {
			return i, err
		}
	}
	return len(pending), nil
}

func apply(ctx context.Context, db *sql.DB, m Migration) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	for _, st := range SplitStatements(m.SQL) {
		if _, err := tx.ExecContext(ctx, st.SQL); err != nil {
			return fmt.Errorf("migration %04d_%s.sql:%d: %w", m.Version, m.Name, st.Line, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (?, ?, now()::TIMESTAMP)`, m.Version, m.Name); err != nil {
		return fmt.Errorf("migration %04d_%s: record version: %w", m.Version, m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migration %04d_%s: commit: %w", m.Version, m.Name, err)
	}
	return nil
}

// Statement is one SQL statement of a file and the line it starts on.
type Statement struct {
	SQL  string
	Line int
}

// SplitStatements splits a SQL file on semicolons that end a statement,
// outside string literals and comments, so errors can name a line.
func SplitStatements(src string) []Statement {
	var out []Statement
	start := 0
	inStr, inLineComment, inBlock := false, false, false
	flush := func(end int) {
		seg := src[start:end]
		off := firstCode(seg)
		if off < 0 {
			return
		}
		line := 1 + strings.Count(src[:start+off], "\n")
		out = append(out, Statement{SQL: strings.TrimSpace(seg), Line: line})
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case inLineComment:
			if c == '\n' {
				inLineComment = false
			}
		case inBlock:
			if c == '*' && i+1 < len(src) && src[i+1] == '/' {
				inBlock = false
				i++
			}
		case inStr:
			if c == '\'' {
				inStr = false
			}
		case c == '\'':
			inStr = true
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			inLineComment = true
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			inBlock = true
		case c == ';':
			flush(i)
			start = i + 1
		}
	}
	flush(len(src))
	return out
}

// firstCode returns the offset of the first byte of s outside blanks and
// comments, or -1 when s holds nothing else.
func firstCode(s string) int {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r':
		case strings.HasPrefix(s[i:], "--"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return -1
			}
			i += j
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return -1
			}
			i += j + 3
		default:
			return i
		}
	}
	return -1
}
