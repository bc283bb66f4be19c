package lake

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/tracehouse/tracehouse/schema"
)

// TestEveryTableHasAPlace: each table of the migrated schema is either a
// lake table or listed in Local with where its content comes from, so a
// migration adding a table cannot leave lakes silently without it.
func TestEveryTableHasAPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	all, err := tableColumns(ctx, w.DB)
	if err != nil {
		t.Fatal(err)
	}
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
			for _, c := range all[n] {
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
	t.Parallel()
	dir := demoLake(t)
	counts := demoLakeCounts(t) // through Open
	db, err := sql.Open("duckdb", "?threads=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // SET VARIABLE belongs to the connection
	if _, err := db.Exec(`SET VARIABLE ` + Variable + ` = ` + literal(dir)); err != nil {
		t.Fatal(err)
	}
	// each file's footer read once, as Open reads them (not for each view
	// and count again: 0.08 CPU-s more)
	if _, err := db.Exec(`SET parquet_metadata_cache = true`); err != nil {
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
		want, got := counts[v], int64(0)
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

// TestEngineViews runs the views of spark.sql and trino.sql in DuckDB over
// <table>_files views that read the files as those engines do (partition
// columns from the paths): the views are plain SQL all three accept, and
// give the lake's rows.
func TestEngineViews(t *testing.T) {
	t.Parallel()
	dir := demoLake(t)
	counts := demoLakeCounts(t) // the lake's, through Open
	// One DuckDB for both engines' views, which reads each file's footer
	// once (parquet_metadata_cache): two, each reading the footers again
	// for every view and count, cost 0.2 CPU-s more.
	db, err := sql.Open("duckdb", "?threads=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // SET belongs to the connection
	if _, err := db.Exec(`SET parquet_metadata_cache = true`); err != nil {
		t.Fatal(err)
	}
	for _, tb := range Tables {
		// hive_partitioning: the partition columns come from the
		// paths and override the files' copies, as in Spark and Trino
		q := fmt.Sprintf(`CREATE VIEW %s AS SELECT * FROM read_parquet(%s, hive_partitioning = %v, union_by_name = true)`,
			ident(tb.Name+"_files"), literal(filepath.Join(dir, tb.Name, "**", "[0-9a-f]*.parquet")), len(partitionKeys(tb)) > 0)
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"spark.sql", "trino.sql"} {
		b, err := os.ReadFile(filepath.Join(dir, metaDir, f))
		if err != nil {
			t.Fatal(err)
		}
		views := 0
		for _, st := range schema.SplitStatements(string(b)) {
			s := strings.TrimSpace(st.SQL)
			if !strings.HasPrefix(s, "CREATE OR REPLACE VIEW") {
				continue
			}
			views++
			if _, err := db.Exec(strings.ReplaceAll(s, "`", `"`)); err != nil {
				t.Fatalf("%s line %d: %v", f, st.Line, err)
			}
		}
		if views != len(Tables) {
			t.Errorf("%s: %d views, want %d", f, views, len(Tables))
		}
		for _, tb := range Tables {
			want, got := counts[tb.Name], int64(0)
			if err := db.QueryRow("SELECT count(*) FROM " + tb.Name).Scan(&got); err != nil {
				t.Fatalf("%s %s: %v", f, tb.Name, err)
			}
			if got != want {
				t.Errorf("%s: %s has %d rows, the lake %d", f, tb.Name, got, want)
			}
			// the next engine's views start from none of these
			if _, err := db.Exec("DROP VIEW " + ident(tb.Name)); err != nil {
				t.Fatalf("%s: %s: %v", f, tb.Name, err)
			}
		}
		if !strings.Contains(string(b), LakeURI+"/kernels") {
			t.Errorf("%s: no location of kernels", f)
		}
	}
}
