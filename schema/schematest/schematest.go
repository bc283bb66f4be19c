// Package schematest gives tests a migrated warehouse cheaply. The embedded
// migrations run once per test binary, into a template file; each test then
// opens its own copy of that file, which costs a fraction of migrating. A
// template can be extended once (a catalog installed, the demo ingested)
// and copied the same way, or opened read-only by every test that only
// reads it.
//
// A package using it removes the templates when its tests end:
//
//	func TestMain(m *testing.M) { os.Exit(schematest.Main(m)) }
package schematest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/tracehouse/tracehouse/schema"
)

// template is one file built at most once per test binary.
type template struct {
	once sync.Once
	path string
	err  error
}

var (
	mu        sync.Mutex
	dir       string // holds every template of this test binary
	templates = map[string]*template{}
)

// Main runs the tests and then removes the templates. DuckDB's allocator
// keeps the pages it frees meanwhile (schema.KeepFreedPages): a test
// binary runs thousands of small statements, whose pages were otherwise
// purged and faulted in again. Unless $TMPDIR is set, the tests' temporary
// files (t.TempDir, os.MkdirTemp, the templates, and those of the child
// processes they start) go to memory (memTempDir); each test removes its
// own as before. Go's collector runs at GOGC=400 unless $GOGC is set:
// the tests' garbage (decoded traces, rows scanned into structs) is
// short-lived, and the default 100 cost 2-6% more CPU time in the
// binaries of cmd/tracehouse, queries and ingest (bench/README.md,
// "Twenty-sixth figures"), for a tenth more peak memory at most.
func Main(m *testing.M) int {
	schema.KeepFreedPages()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("TMPDIR") == "" {
		if mem := memTempDir(); mem != "" {
			os.Setenv("TMPDIR", mem)
		}
	}
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
		dir = ""
	}
	return code
}

// Migrated returns the path of a warehouse file holding every embedded
// migration and nothing else. Do not write to it: open a copy.
func Migrated(tb testing.TB) string {
	tb.Helper()
	return build(tb, "migrated", func(path string) error {
		w, err := schema.Open(context.Background(), path, schema.Options{})
		if err != nil {
			return err
		}
		return w.Close()
	})
}

// Template returns the path of a warehouse file made, once per test binary
// and name, by running fill on a copy of the migrated template. Every
// caller of a name must pass the same fill. Do not write to the file: open
// a copy, or open it read-only.
func Template(tb testing.TB, name string, fill func(context.Context, *schema.Warehouse) error) string {
	tb.Helper()
	return Derived(tb, name, Migrated(tb), fill)
}

// Derived is Template starting from another template (base, a path
// Template or Derived returned) rather than the migrated one: a
// warehouse that is another with more done to it (the demo ingested,
// then finished) is built from a copy of that one, not from scratch.
func Derived(tb testing.TB, name, base string, fill func(context.Context, *schema.Warehouse) error) string {
	tb.Helper()
	return build(tb, name, func(path string) error {
		if err := copyFile(path, base); err != nil {
			return err
		}
		ctx := context.Background()
		w, err := schema.Open(ctx, path, schema.Options{Threads: 1})
		if err != nil {
			return err
		}
		if err := fill(ctx, w); err != nil {
			w.Close()
			return err
		}
		// Closing checkpoints: the file is then whole without its log.
		return w.Close()
	})
}

// TemplateFile is Template for a fill that opens the file itself (a command
// run in-process, say): fill gets the path of a closed copy of the migrated
// template and must leave it closed.
func TemplateFile(tb testing.TB, name string, fill func(path string) error) string {
	tb.Helper()
	migrated := Migrated(tb)
	return build(tb, name, func(path string) error {
		if err := copyFile(path, migrated); err != nil {
			return err
		}
		return fill(path)
	})
}

func build(tb testing.TB, name string, fill func(path string) error) string {
	tb.Helper()
	mu.Lock()
	if dir == "" {
		d, err := os.MkdirTemp("", "schematest-")
		if err != nil {
			mu.Unlock()
			tb.Fatal(err)
		}
		dir = d
	}
	tp := templates[name]
	if tp == nil {
		tp = &template{path: filepath.Join(dir, name+".duckdb")}
		templates[name] = tp
	}
	mu.Unlock()
	tp.once.Do(func() { tp.err = fill(tp.path) })
	if tp.err != nil {
		tb.Fatalf("build the %s warehouse template: %v", name, tp.err)
	}
	return tp.path
}

// Copy copies the warehouse file at template into a temporary directory of
// tb and returns the copy's path.
func Copy(tb testing.TB, template string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), filepath.Base(template))
	if err := copyFile(p, template); err != nil {
		tb.Fatal(err)
	}
	return p
}

// Open opens a copy of template (the migrated template when it is "") for
// tb alone; it is closed when tb ends, without a checkpoint (the copy is
// thrown away).
//
// The copy runs its queries on one DuckDB thread. Test warehouses are tiny,
// so a second thread adds only its coordination (about a third more CPU
// time), and the tests of a package already run in parallel beside the
// other packages'. Commands under test keep DuckDB's default.
func Open(tb testing.TB, template string) *schema.Warehouse {
	tb.Helper()
	if template == "" {
		template = Migrated(tb)
	}
	w, err := schema.Open(context.Background(), Copy(tb, template), schema.Options{Threads: 1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { w.Close() })
	if _, err := w.DB.Exec("PRAGMA disable_checkpoint_on_shutdown"); err != nil {
		tb.Fatal(err)
	}
	return w
}

// Limited opens a migrated warehouse for tb (Open) whose caller set
// DuckDB's memory limit to 3 GiB, and returns with it a reader of the
// limit in force: for the tests that a step bounding DuckDB's memory puts
// the caller's limit back (ingest's loads, aggregates' finish).
func Limited(tb testing.TB) (*schema.Warehouse, func() string) {
	tb.Helper()
	return LimitedFrom(tb, "")
}

// LimitedFrom is Limited on a copy of template (Open's).
func LimitedFrom(tb testing.TB, template string) (*schema.Warehouse, func() string) {
	tb.Helper()
	w := Open(tb, template)
	if _, err := w.DB.Exec(`SET memory_limit = '3GiB'`); err != nil {
		tb.Fatal(err)
	}
	return w, func() string {
		tb.Helper()
		var s string
		if err := w.DB.QueryRow(`SELECT current_setting('memory_limit')`).Scan(&s); err != nil {
			tb.Fatal(err)
		}
		return s
	}
}

func copyFile(dst, src string) error {
	if _, err := os.Stat(src + ".wal"); err == nil {
		return fmt.Errorf("%s has a write-ahead log: it is still open for writing", src)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Dump runs query on db and prints every row, a line each (values as fmt
// prints them), for tests that compare tables or query results.
func Dump(tb testing.TB, db *sql.DB, query string) string {
	tb.Helper()
	rows, err := db.Query(query)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		tb.Fatal(err)
	}
	var b strings.Builder
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintln(&b, vals...)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

// Threads reads DuckDB's threads and external_threads settings of db, for
// tests of who runs a statement's work (the callers only, or workers).
func Threads(tb testing.TB, db *sql.DB) (threads, external int64) {
	tb.Helper()
	if err := db.QueryRow(`SELECT current_setting('threads')::BIGINT, current_setting('external_threads')::BIGINT`).Scan(&threads, &external); err != nil {
		tb.Fatal(err)
	}
	return threads, external
}

// HoldMemory makes DuckDB hold memory it cannot free until release: rows
// a transaction of its own has not committed (DuckDB writes them to its
// temporary files only to meet a limit of 1 MiB or more), so that setting
// memory_limit to 0 MiB is refused, for tests of a bound DuckDB is
// already over. release rolls the rows back.
func HoldMemory(tb testing.TB, db *sql.DB) (release func()) {
	tb.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	for _, q := range []string{"CREATE TEMP TABLE hold (i BIGINT, s VARCHAR)", "BEGIN",
		"INSERT INTO hold SELECT range, repeat('x', 50) FROM range(300000)"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			conn.Close()
			tb.Fatal(err)
		}
	}
	return func() {
		tb.Helper()
		_, err := conn.ExecContext(ctx, "ROLLBACK")
		if err = errors.Join(err, conn.Close()); err != nil {
			tb.Fatal(err)
		}
	}
}
