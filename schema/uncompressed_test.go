package schema

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tracehouse/tracehouse/migrations"
)

// uncompressedTables are the tables whose string columns migration 0025
// stores uncompressed.
var uncompressedTables = []string{"runs", "traces", "fusion_match_store", "idle_gap_store"}

// TestUncompressedRunStrings (issue 38): migration 0025 makes runs, traces,
// fusion_match_store and idle_gap_store again with their string columns
// stored uncompressed. On a warehouse holding rows at 0024, it keeps every
// row, column (type, default, nullability, comment), constraint and table
// comment as they were; after it, rows appended and checkpointed there are
// stored uncompressed in every segment of a VARCHAR, JSON or VARCHAR[]
// column, in the migrated file and in a new one (made from the template),
// while the other columns keep DuckDB's choice.
func TestUncompressedRunStrings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	all, err := LoadMigrations(migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	before := fstest.MapFS{}
	for _, m := range all {
		if m.Version < 25 {
			before[fmt.Sprintf("%04d_%s.sql", m.Version, m.Name)] = &fstest.MapFile{Data: []byte(m.SQL)}
		}
	}
	path := filepath.Join(t.TempDir(), "w.duckdb")
	w, err := Open(ctx, path, Options{Migrations: before, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The library's column comments of these tables, as a warehouse at
	// 0024 holds them (a test's own migrations get no library; the whole
	// of today's library needs the tables of every migration).
	lib, err := loadLibrary()
	if err != nil {
		t.Fatal(err)
	}
	comments := 0
	for _, st := range lib.stmts {
		m := commentTarget.FindStringSubmatch(st.sql)
		if m == nil || !slices.Contains(uncompressedTables, m[1]) {
			continue
		}
		if _, err := w.DB.ExecContext(ctx, st.sql); err != nil {
			t.Fatalf("%s:%d: %v", st.file, st.line, err)
		}
		comments++
	}
	if comments < 20 {
		t.Fatalf("only %d of the library's comments on %v", comments, uncompressedTables)
	}
	for _, tbl := range uncompressedTables {
		fillRows(t, w, tbl, 1, 2)
	}
	old := tablesState(t, w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	w, err = Open(ctx, path, Options{Migrations: migrations.FS, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := tablesState(t, w); got != old {
		t.Errorf("migration 0025 changed the tables:\n--- before\n%s--- after\n%s", old, got)
	}
	checkUncompressed(t, w, 1000)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	n, err := Open(ctx, filepath.Join(t.TempDir(), "new.duckdb"), Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	checkUncompressed(t, n, 1)
}

// checkUncompressed appends 300 rows numbered from first to each table,
// checkpoints, and checks the compression of every segment DuckDB wrote.
func checkUncompressed(t *testing.T, w *Warehouse, first int) {
	t.Helper()
	for _, tbl := range uncompressedTables {
		fillRows(t, w, tbl, first, first+300)
	}
	if _, err := w.DB.Exec("CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	for _, tbl := range uncompressedTables {
		got := dump(t, w.DB, `SELECT DISTINCT c.column_name, s.compression = 'Uncompressed'
			FROM pragma_storage_info('`+tbl+`') s JOIN duckdb_columns() c ON c.table_name = '`+tbl+`' AND c.column_name = s.column_name
			WHERE s.segment_type <> 'VALIDITY' AND c.data_type IN ('VARCHAR', 'JSON', 'VARCHAR[]') ORDER BY ALL`)
		var want strings.Builder
		for _, c := range stringColumns(t, w, tbl) {
			fmt.Fprintln(&want, c, true)
		}
		if got != want.String() {
			t.Errorf("%s: string columns stored uncompressed (name, every segment):\n%swant\n%s", tbl, got, want.String())
		}
		// run_id (INTEGER) is not forced: DuckDB packs 300 distinct ids.
		if got := dump(t, w.DB, `SELECT DISTINCT s.compression FROM pragma_storage_info('`+tbl+`') s
			WHERE s.column_name = 'run_id' AND s.segment_type <> 'VALIDITY'`); got == "Uncompressed\n" {
			t.Errorf("%s.run_id is stored uncompressed too", tbl)
		}
	}
}

// stringColumns names tbl's VARCHAR, JSON and VARCHAR[] columns, in order
// of name.
func stringColumns(t *testing.T, w *Warehouse, tbl string) []string {
	t.Helper()
	rows := dump(t, w.DB, `SELECT column_name FROM duckdb_columns()
		WHERE table_name = '`+tbl+`' AND data_type IN ('VARCHAR', 'JSON', 'VARCHAR[]') ORDER BY ALL`)
	return strings.Fields(rows)
}

// fillRows inserts rows from..to-1 into tbl, each column given a value of
// its type made from the row number (so that unique columns differ).
func fillRows(t *testing.T, w *Warehouse, tbl string, from, to int) {
	t.Helper()
	rows, err := w.DB.Query(`SELECT data_type FROM duckdb_columns() WHERE table_name = ? ORDER BY column_index`, tbl)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for rows.Next() {
		var ty string
		if err := rows.Scan(&ty); err != nil {
			t.Fatal(err)
		}
		types = append(types, ty)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var tuples []string
	for i := from; i < to; i++ {
		vals := make([]string, len(types))
		for j, ty := range types {
			switch ty {
			case "INTEGER", "BIGINT", "UBIGINT":
				vals[j] = fmt.Sprint(i*100 + j)
			case "DOUBLE":
				vals[j] = fmt.Sprintf("%d.5", i)
			case "BOOLEAN":
				vals[j] = fmt.Sprint(i%2 == 0)
			case "TIMESTAMP":
				vals[j] = fmt.Sprintf("TIMESTAMP '2026-01-02 03:04:05' + INTERVAL %d SECOND", i)
			case "VARCHAR":
				vals[j] = fmt.Sprintf("'%s''s value %d'", tbl, i)
			case "JSON":
				vals[j] = fmt.Sprintf(`'{"row": %d}'`, i)
			case "VARCHAR[]":
				vals[j] = fmt.Sprintf("['a%d', 'b']", i)
			case "DOUBLE[]":
				vals[j] = fmt.Sprintf("[%d.25]", i)
			case "MAP(VARCHAR, VARCHAR)":
				vals[j] = fmt.Sprintf("MAP {'k': 'v%d'}", i)
			default:
				t.Fatalf("%s: no test value for a %s column", tbl, ty)
			}
		}
		tuples = append(tuples, "("+strings.Join(vals, ", ")+")")
	}
	if _, err := w.DB.Exec(`INSERT INTO ` + tbl + ` VALUES ` + strings.Join(tuples, ", ")); err != nil {
		t.Fatalf("%s: %v", tbl, err)
	}
}

// tablesState prints the rows, columns, constraints and comments of the
// tables 0025 makes again.
func tablesState(t *testing.T, w *Warehouse) string {
	t.Helper()
	list := "'" + strings.Join(uncompressedTables, "', '") + "'"
	var b strings.Builder
	for _, tbl := range uncompressedTables {
		b.WriteString(dump(t, w.DB, `SELECT '`+tbl+`', * FROM `+tbl+` ORDER BY ALL`))
	}
	b.WriteString(dump(t, w.DB, `SELECT table_name, column_index, column_name, data_type, column_default, is_nullable, comment
		FROM duckdb_columns() WHERE table_name IN (`+list+`) ORDER BY ALL`))
	b.WriteString(dump(t, w.DB, `SELECT table_name, constraint_type, constraint_text
		FROM duckdb_constraints() WHERE table_name IN (`+list+`) ORDER BY ALL`))
	b.WriteString(dump(t, w.DB, `SELECT table_name, comment, column_count, has_primary_key
		FROM duckdb_tables() WHERE table_name IN (`+list+`) ORDER BY ALL`))
	return b.String()
}

// dump runs query on db and prints every row, a line each.
func dump(t *testing.T, db *sql.DB, query string) string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, vals...)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
