package schema

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/sqllib"
)

// beforeLibrary is an empty warehouse as migrations 0001-0017 made it
// before the SQL library existed (the embedded template of then): its
// macros and views were the migrations', and it stores no library hash.
const beforeLibrary = "testdata/warehouse-0017-before-sqllib.duckdb.gz"

// unpack writes a gzipped warehouse to a new file of t and returns its path.
func unpack(t *testing.T, gz string) string {
	t.Helper()
	b, err := os.ReadFile(gz)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	if _, err := raw.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w.duckdb")
	if err := os.WriteFile(path, raw.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// definitions are the macros and views of the warehouse's own database
// (not TEMP ones), name -> kind, parameters and text.
func definitions(t *testing.T, db *sql.DB, database string) map[string]string {
	t.Helper()
	rows, err := db.Query(`SELECT function_name, function_type || ' ' || parameters::VARCHAR || ' ' || macro_definition
		FROM duckdb_functions() WHERE database_name = ` + database + ` AND function_type IN ('macro', 'table_macro')
		UNION ALL
		SELECT view_name, sql FROM duckdb_views() WHERE database_name = ` + database + ` AND NOT internal`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			t.Fatal(err)
		}
		out[name] = def
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func libraryNames(t *testing.T) []string {
	t.Helper()
	ms, err := sqllib.Load()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		for _, o := range sqllib.Definitions(m.SQL) {
			names = append(names, o.Name)
		}
	}
	return names
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestLibraryReadOnlyStale: a read-only open of a warehouse whose stored
// library is older than the binary's leaves the file alone and gives
// every connection the library as TEMP objects, which the queries then
// use in place of the stored ones.
func TestLibraryReadOnlyStale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// a current warehouse whose library is made stale: another hash, and
	// an older _overlap_fingerprint (the one before the lake flag)
	path := filepath.Join(t.TempDir(), "w.duckdb")
	w, err := Open(ctx, path, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE OR REPLACE MACRO _sqllib_hash() AS 'stale'`,
		`CREATE OR REPLACE MACRO _overlap_fingerprint(run) AS 42::UBIGINT`,
	} {
		if _, err := w.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	before := fileSum(t, path)
	w, err = Open(ctx, path, Options{ReadOnly: true, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	// two connections at once: each gets the library
	c1, err := w.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := w.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := LibraryHash()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []*sql.Conn{c1, c2} {
		var n int
		if err := c.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_functions() WHERE database_name = 'temp' AND function_name = 'kernel_overlap_for'`).Scan(&n); err != nil || n != 1 {
			t.Errorf("connection %d: %d TEMP kernel_overlap_for (%v)", i, n, err)
		}
		// the TEMP definition wins: a lake flag set on this connection
		// turns the fingerprint constant only in the library's version
		if _, err := c.ExecContext(ctx, `SET VARIABLE tracehouse_lake = 'x'`); err != nil {
			t.Fatal(err)
		}
		var fp uint64
		if err := c.QueryRowContext(ctx, `SELECT _overlap_fingerprint(1)`).Scan(&fp); err != nil || fp != 0 {
			t.Errorf("connection %d: fingerprint %d (%v), want the library's 0", i, fp, err)
		}
		if h, err := StoredLibraryHash(ctx, c); err != nil || h != "stale" {
			t.Errorf("connection %d: stored hash %q (%v), want the stale one", i, h, err)
		}
	}
	c1.Close()
	c2.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if fileSum(t, path) != before {
		t.Error("a read-only open wrote the warehouse")
	}
	if want == "" {
		t.Error("empty library hash")
	}
}

// TestLibraryReplacesTheMigrations: the first writable open of a
// warehouse made before the library stores the library and its hash, and
// its macros and views are then exactly those of a new warehouse (whose
// macros the migrations no longer make). The new warehouse is copied from
// the embedded template, as every new file is (TestTemplateCurrent holds
// it equal to what the migrations and the library build): migrating one
// here cost 40% of the test, and made the new warehouse's library with the
// same code as the upgraded one's, so a change to that code showed on
// both sides alike.
func TestLibraryReplacesTheMigrations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := unpack(t, beforeLibrary)
	w, err := Open(ctx, path, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := LibraryHash()
	if h, err := StoredLibraryHash(ctx, w.DB); err != nil || h != want {
		t.Errorf("stored hash %q (%v), want %q", h, err, want)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// reopened, as stored (DuckDB prints a stored macro differently)
	old, err := Open(ctx, path, Options{ReadOnly: true, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	fresh := filepath.Join(t.TempDir(), "fresh.duckdb")
	nw, err := Open(ctx, fresh, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := nw.Close(); err != nil {
		t.Fatal(err)
	}
	nw, err = Open(ctx, fresh, Options{ReadOnly: true, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer nw.Close()
	got, exp := definitions(t, old.DB, "current_database()"), definitions(t, nw.DB, "current_database()")
	for name, def := range exp {
		if got[name] != def {
			t.Errorf("%s differs from a new warehouse's:\n got %s\nwant %s", name, got[name], def)
		}
	}
	for name := range got {
		if _, ok := exp[name]; !ok {
			t.Errorf("%s is left over", name)
		}
	}
	for _, name := range libraryNames(t) {
		if _, ok := exp[name]; !ok {
			t.Errorf("library object %s missing", name)
		}
	}
	if n := len(definitions(t, nw.DB, "'temp'")); n != 0 {
		t.Errorf("a current warehouse got %d TEMP objects", n)
	}
}

// TestLibraryDropsWhatItNoLongerDefines: applying a new library drops the
// objects the stored one listed and the new one lacks, and keeps a user's
// own macros and views.
func TestLibraryDropsWhatItNoLongerDefines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.duckdb")
	w, err := Open(ctx, path, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	// an earlier library that also defined _gone and gone_view
	for _, q := range []string{
		`CREATE MACRO _gone(x) AS x + 1`,
		`CREATE MACRO gone_table(x) AS TABLE SELECT x`,
		`CREATE VIEW gone_view AS SELECT 1 AS one`,
		`CREATE MACRO my_macro(x) AS x * 2`,
		`CREATE VIEW my_view AS SELECT * FROM kernel_events`,
		`CREATE OR REPLACE MACRO _sqllib_hash() AS 'earlier'`,
		`CREATE OR REPLACE MACRO _sqllib_objects() AS ['_gone', 'gone_table', 'gone_view', 'kernel_events']::VARCHAR[]`,
	} {
		if _, err := w.DB.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w, err = Open(ctx, path, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defs := definitions(t, w.DB, "current_database()")
	for _, gone := range []string{"_gone", "gone_table", "gone_view"} {
		if _, ok := defs[gone]; ok {
			t.Errorf("%s was not dropped", gone)
		}
	}
	for _, kept := range []string{"my_macro", "my_view", "kernel_events", "overlap_kernels"} {
		if _, ok := defs[kept]; !ok {
			t.Errorf("%s was dropped", kept)
		}
	}
	var n int
	if err := w.DB.QueryRowContext(ctx, `SELECT count(*) FROM my_view`).Scan(&n); err != nil {
		t.Errorf("a user's view over a library view: %v", err)
	}
	if h, _ := StoredLibraryHash(ctx, w.DB); h == "earlier" || !strings.HasPrefix(defs["_sqllib_hash"], "macro") {
		t.Errorf("stored hash %q", h)
	}
}

// TestLibraryReadOnlyStaleDescriptions: the TEMP copies of the library a
// read-only open of a stale warehouse makes carry the library's
// descriptions (views, their columns, macros), as a new warehouse's do.
// Before, they had none, and the stored objects the older library's.
func TestLibraryReadOnlyStaleDescriptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// what a new warehouse says of the library's views, columns and macros
	fresh, err := Open(ctx, Memory, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	const describe = `SELECT 'view ' || view_name, comment FROM duckdb_views() WHERE database_name = $1 AND schema_name = 'main'
		UNION ALL SELECT 'column ' || c.table_name || '.' || c.column_name, c.comment FROM duckdb_columns() c
		JOIN duckdb_views() v ON v.database_name = c.database_name AND v.view_name = c.table_name
		WHERE c.database_name = $1 AND c.schema_name = 'main'
		UNION ALL SELECT 'macro ' || function_name, comment FROM duckdb_functions() WHERE database_name = $1 AND schema_name = 'main'
		AND function_type IN ('macro', 'table_macro') AND NOT starts_with(function_name, '_')
		ORDER BY ALL`
	read := func(q interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}, database string) map[string]string {
		t.Helper()
		rows, err := q.QueryContext(ctx, describe, database)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var k string
			var c sql.NullString
			if err := rows.Scan(&k, &c); err != nil {
				t.Fatal(err)
			}
			out[k] = c.String
		}
		return out
	}
	var db string
	if err := fresh.DB.QueryRowContext(ctx, `SELECT current_database()`).Scan(&db); err != nil {
		t.Fatal(err)
	}
	want := read(fresh.DB, db)
	fresh.Close()
	if want["column kernel_events.site_id"] == "" || want["macro kernel_family"] == "" || len(want) < 100 {
		t.Fatalf("a new warehouse describes %d objects: %v", len(want), want)
	}
	// a warehouse whose stored library is older, with older descriptions
	path := filepath.Join(t.TempDir(), "w.duckdb")
	w, err := Open(ctx, path, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE OR REPLACE MACRO _sqllib_hash() AS 'stale'`,
		`COMMENT ON COLUMN kernel_events.site_id IS 'older'`,
		`COMMENT ON VIEW kernel_events IS 'older'`,
		`COMMENT ON MACRO kernel_family IS 'older'`,
	} {
		if _, err := w.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w, err = Open(ctx, path, Options{ReadOnly: true, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	got := read(w.DB, "temp")
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: the TEMP copy says %q, a new warehouse %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: a TEMP object a new warehouse does not have", k)
		}
	}
}
