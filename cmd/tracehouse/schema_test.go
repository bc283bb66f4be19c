package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tracehouse/tracehouse/lake"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/schema"
)

// TestSchemaCommand lists objects, one object's columns, and fails with one
// line naming an unknown object.
func TestSchemaCommand(t *testing.T) {
	t.Parallel()
	db := demoCopy(t)
	code, out, stderr := runCmd(t, "--db", db, "schema")
	if code != 0 {
		t.Fatalf("schema exit %d: %s", code, stderr)
	}
	for _, want := range []string{"kernel_events", "overlap_kernels", "(run, rank, stage)", "One row per ingested trace file."} {
		if !strings.Contains(out, want) {
			t.Errorf("schema listing lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "_run_id") {
		t.Errorf("internal macro listed:\n%s", out)
	}

	code, out, stderr = demoOnce(t, "schema", "traces", "--format", "json") // as testLakeSchema's
	if code != 0 {
		t.Fatalf("schema traces exit %d: %s", code, stderr)
	}
	var rows []schemaJSON
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	byName := map[string]schemaJSON{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	if r := byName["content_hash"]; r.Kind != "column" || r.Type == nil || *r.Type != "VARCHAR" || !strings.Contains(r.Description, "idempotency") {
		t.Errorf("traces.content_hash: %+v", r)
	}

	code, _, stderr = runCmd(t, "--db", db, "schema", "no_such_table")
	if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, `"no_such_table"`) {
		t.Errorf("unknown object: exit %d, stderr %q", code, stderr)
	}
}

// TestReadersNeverCreateTheWarehouse: read-only commands on a missing
// warehouse say so in one line, exit 1 and leave no file behind.
func TestReadersNeverCreateTheWarehouse(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "missing.duckdb")
	for _, args := range [][]string{{"runs"}, {"sql", "SELECT 1"}, {"triage", "some-run"}, {"schema"}} {
		code, _, stderr := runCmd(t, append([]string{"--db", db}, args...)...)
		if code != 1 || !strings.Contains(stderr, "no warehouse at "+db) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Fatalf("%v created %s", args, db)
		}
	}
}

// TestSchemaPrintsDescriptionsWhole: `schema NAME` of every table and view
// prints every column's description whole in a terminal-fitted table (at
// 120 and at 60 columns: long ones wrap as notes under the table, never
// cut), and every column has one. The descriptions it must print are the
// warehouse's own (COMMENT ON, read from duckdb_columns in one query): the
// schema package checks the warehouse; this, what the command shows of it.
func TestSchemaPrintsDescriptionsWhole(t *testing.T) {
	t.Parallel()
	db := demoCopy(t)
	code, out, stderr := runCmd(t, "--db", db, "--format", "json", "sql", `SELECT table_name AS object, column_name AS name,
		data_type AS type, coalesce(comment, '') AS description FROM duckdb_columns()
		WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal
		ORDER BY table_name, column_index`)
	if code != 0 {
		t.Fatalf("duckdb_columns: exit %d: %s", code, stderr)
	}
	var rows []struct{ Object, Name, Type, Description string }
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	// each object's columns as `schema NAME` reads them
	columns := map[string][]queries.SchemaObjectsRow{}
	for _, r := range rows {
		columns[r.Object] = append(columns[r.Object], queries.SchemaObjectsRow{Kind: "column", Name: r.Name,
			Type: sql.NullString{String: r.Type, Valid: true}, Description: r.Description})
	}
	// What `schema NAME` reads (queries.SchemaObjects) is what
	// duckdb_columns lists, row for row: held so for the objects the
	// package's other tests print (demoSchemaRows reads them once: a
	// table, a view, the lake's bookkeeping views), not read again for
	// every object (a read is about 20 ms of CPU, the printing below
	// less than one).
	for o, read := range demoSchemaRows(t, schemaObjectsRead...) {
		if o == "" {
			continue
		}
		if !slices.Equal(read, columns[o]) {
			t.Errorf("schema %s reads\n%v\nwant (duckdb_columns)\n%v", o, read, columns[o])
		}
	}
	// words, with line breaks and the wrapped lines' indentation gone
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	// What `schema` lists (read once: demoSchemaRows), then each table's
	// and view's rows printed at both widths by schema's print step
	// (schemaPrint): the output is a function of them.
	objects := 0
	for _, o := range demoSchemaRows(t, "")[""] {
		if o.Kind != "table" && o.Kind != "view" {
			continue
		}
		objects++
		cols := columns[o.Name]
		if len(cols) == 0 {
			t.Errorf("%s %s: no columns in duckdb_columns", o.Kind, o.Name)
		}
		for _, columns := range []string{"", "60"} {
			env := func(k string) string {
				if k == "COLUMNS" {
					return columns
				}
				return testEnv(k)
			}
			opts := parseCmdEnv(t, env, db, "table", newCmdSchema, o.Name)
			io, out, _ := testIO("")
			opts.IO = io
			if err := schemaPrint(opts, cols); err != nil {
				t.Fatalf("schema %s: %v", o.Name, err)
			}
			text := words(out.String())
			for _, c := range cols {
				if c.Description == "" {
					t.Errorf("%s %s: column %s has no description", o.Kind, o.Name, c.Name)
				} else if !strings.Contains(text, words(c.Description)) {
					t.Errorf("schema %s (COLUMNS=%q): the description of %s is not printed whole: %q\n%s", o.Name, columns, c.Name, c.Description, out)
				}
			}
		}
	}
	if objects < 20 {
		t.Errorf("only %d tables and views listed", objects)
	}
}

// schemaObjectsRead are the objects whose `schema NAME` rows the
// package's tests read of the demo warehouse (demoSchemaRows), "" for the
// list: testLakeSchema's (the lake's own bookkeeping views among them),
// TestTextFitsTheWidth's and TestSchemaReadOnlyStaleLibrary's.
var schemaObjectsRead = []string{"", "traces", "kernels", "runs", "kernel_events", "kernel_overlap_runs", "step_store_runs", "device_busy_store"}

// demoSchema holds the rows `schema [NAME]` reads of the demo warehouse,
// by NAME ("" for the list): demoSchemaRows.
var demoSchema struct {
	sync.Mutex
	rows map[string][]queries.SchemaObjectsRow
}

// demoSchemaRows gives the rows `schema NAME` reads of the demo warehouse
// for each of objects ("" for the list), read by the command's steps but
// its print step (schemaRun: open as schema opens, lake.Describe,
// queries.SchemaObjects) once per test binary and NAME, those not read
// yet on one open of a copy. The rows come from the binary's migrations
// and SQL library, not from the runs the warehouse holds or their tags:
// the tests that print `schema` of a warehouse this binary wrote print
// them (schemaPrinted).
func demoSchemaRows(t *testing.T, objects ...string) map[string][]queries.SchemaObjectsRow {
	t.Helper()
	demoSchema.Lock()
	defer demoSchema.Unlock()
	if demoSchema.rows == nil {
		demoSchema.rows = map[string][]queries.SchemaObjectsRow{}
	}
	var missing []string
	for _, o := range objects {
		if _, ok := demoSchema.rows[o]; !ok && !slices.Contains(missing, o) {
			missing = append(missing, o)
		}
	}
	if len(missing) > 0 {
		ctx := context.Background()
		w, err := parseCmd(t, demoCopy(t), "table", newCmdSchema).Warehouse(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if err := lake.Describe(ctx, w); err != nil {
			t.Fatal(err)
		}
		for _, o := range missing {
			rows, err := queries.SchemaObjects(ctx, w.DB, o)
			if err != nil {
				t.Fatalf("schema %s: %v", o, err)
			}
			demoSchema.rows[o] = rows
		}
	}
	got := map[string][]queries.SchemaObjectsRow{}
	for _, o := range objects {
		got[o] = demoSchema.rows[o]
	}
	return got
}

// schemaPrinted is what `schema ARGS --format format` prints of rows by
// its print step (schemaPrint), fitted to width (as $COLUMNS, or 0 for
// --wide, sets it; -1: the command line's own).
func schemaPrinted(t *testing.T, rows []queries.SchemaObjectsRow, format string, width int, args ...string) string {
	t.Helper()
	opts := parseCmd(t, "unused.duckdb", format, newCmdSchema, args...)
	io, out, _ := testIO("")
	opts.IO = io
	if width >= 0 {
		opts.Width = width
	}
	if err := schemaPrint(opts, rows); err != nil {
		t.Fatalf("schema %v: %v", args, err)
	}
	return out.String()
}

// TestSchemaReadOnlyStaleLibrary: `schema` (a read-only command) on a
// warehouse whose stored SQL library is older than the binary lists the
// library's views and macros with this binary's descriptions, as after a
// writing command opened it: those of the TEMP copies its queries use.
// Before, it listed the stored objects with the older descriptions until a
// writing command had opened the warehouse once.
func TestSchemaReadOnlyStaleLibrary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "w.duckdb")
	w, err := schema.Open(ctx, db, schema.Options{Threads: 1})
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
	objects := []string{"", "kernel_events", "kernel_family"}
	// a warehouse written with this binary's library (the demo's, its
	// rows read once per test binary) says
	fresh := demoSchemaRows(t, objects...)
	// `schema`, `schema kernel_events`, `schema kernel_family` on the
	// stale warehouse, by the command's steps on one read-only open of it
	// (an open that makes the library's temporary copies; the reads then
	// run on any of its connections)
	gots := schemaOutputs(t, parseCmd(t, db, "csv", newCmdSchema).Warehouse, "csv", objects)
	for _, object := range objects {
		var args []string
		if object != "" {
			args = append(args, object)
		}
		want, got := schemaPrinted(t, fresh[object], "csv", -1, args...), gots[object]
		if got != want || strings.Contains(got, "older") {
			t.Errorf("schema %q on the stale warehouse:\n%s\nwant\n%s", object, got, want)
		}
	}
	// the warehouse still holds the older library: schema wrote nothing
	w, err = schema.Open(ctx, db, schema.Options{ReadOnly: true, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if h, err := schema.StoredLibraryHash(ctx, w.DB); err != nil || h != "stale" {
		t.Errorf("stored library hash %q (%v), want the stale one", h, err)
	}
}
