package lake

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/tracehouse/tracehouse/schema"
)

// TestEveryTableHasAPlace: each table of the migrated schema is either a
// lake table or listed in Local with where its content comes from, so a
// migration adding a table cannot leave lakes silently without it.
func TestEveryTableHasAPlace(t *testing.T) {
	ctx := context.Background()
	w, err := schema.Open(ctx, schema.Memory, schema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rows, err := w.DB.Query(`SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND NOT temporary ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
		_, local := Local[n]
		inLake := slices.ContainsFunc(Tables, func(tb Table) bool { return tb.Name == n })
		if local == inLake {
			t.Errorf("table %s: add it to lake.Tables (with its layout) or to lake.Local", n)
		}
		if inLake {
			cols, err := tableColumns(ctx, w.DB, n)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cols {
				if _, err := ruleOf(n, c.name); err != nil {
					t.Error(err)
				}
			}
		}
	}
	for _, tb := range Tables {
		if !slices.Contains(tables, tb.Name) {
			t.Errorf("lake.Tables has %s, the schema has no such table", tb.Name)
		}
	}
	for n := range Local {
		if !slices.Contains(tables, n) {
			t.Errorf("lake.Local has %s, the schema has no such table", n)
		}
	}
}

// TestViewsFile runs _tracehouse/views.sql in a plain DuckDB (no
// tracehouse schema) and finds the lake's rows, as Open does.
func TestViewsFile(t *testing.T) {
	dir := demoLake(t)
	ctx := context.Background()
	lk, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // SET VARIABLE belongs to the connection
	if _, err := db.Exec(`SET VARIABLE ` + Variable + ` = ` + literal(dir)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, metaDir, "views.sql"))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range schema.SplitStatements(string(b)) {
		if _, err := db.Exec(st.SQL); err != nil {
			t.Fatalf("views.sql line %d: %v", st.Line, err)
		}
	}
	for _, v := range append([]string{"kernel_events", "py_frames"}, tableNames()...) {
		var want, got int64
		if err := lk.DB.QueryRow("SELECT count(*) FROM " + v).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("SELECT count(*) FROM " + v).Scan(&got); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if got != want || want == 0 {
			t.Errorf("%s: %d rows through views.sql, %d through Open", v, got, want)
		}
	}
}

func tableNames() []string {
	var out []string
	for _, t := range Tables {
		out = append(out, t.Name)
	}
	return out
}
