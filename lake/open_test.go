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

	"github.com/tracehouse/tracehouse/schema"
)

// TestOpenRuns: a lake opened for some runs shows exactly their rows of
// every per-run table (what Open shows of them), names no file of another
// run, and keeps the runs, traces, names and sites tables whole; a label
// with no files shows nothing and is no error. Opened with Load (their
// files are well under LoadBytes), it shows the same rows, read into
// tables.
func TestOpenRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := demoLake(t)
	all := openDemoLake(t)
	counts := demoLakeCounts(t)
	picked := []string{"sglang-llama", "trtllm-llama", "no-such-run"}
	some, err := OpenRuns(ctx, dir, schema.Options{Threads: 1}, picked)
	if err != nil {
		t.Fatal(err)
	}
	defer some.Close()
	loaded, err := OpenRead(ctx, dir, schema.Options{Threads: 1}, ReadOptions{Runs: picked, Load: true})
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	var views int
	if err := loaded.DB.QueryRow(`SELECT count(*) FROM duckdb_views() WHERE view_name = 'kernels'`).Scan(&views); err != nil || views != 0 {
		t.Errorf("opened with Load: kernels is still a view (%d, %v)", views, err)
	}
	ofPicked := ` WHERE trace_id IN (SELECT trace_id FROM traces JOIN runs USING (run_id)
		WHERE label IN ('sglang-llama', 'trtllm-llama'))`
	for _, tb := range Tables {
		q := "SELECT * FROM " + tb.Name
		perRun := tb.layout == byTrace || tb.layout == byTraceStageRank
		var want []string
		if perRun {
			want = dump(t, all.DB, q+ofPicked)
			if every := counts[tb.Name]; int64(len(want)) == every {
				t.Errorf("%s: the picked runs hold all %d rows: the test proves nothing", tb.Name, every)
			}
		} else {
			want = dump(t, all.DB, q)
		}
		if got := dump(t, some.DB, q); !slices.Equal(got, want) {
			t.Errorf("%s: %d rows, want %d; first difference:\n%s", tb.Name, len(got), len(want), firstDiff(want, got))
		}
		if got := dump(t, loaded.DB, q); !slices.Equal(got, want) {
			t.Errorf("%s, loaded: %d rows, want %d; first difference:\n%s", tb.Name, len(got), len(want), firstDiff(want, got))
		}
		if tb.Name == "kernels" && len(want) == 0 {
			t.Error("kernels: the picked runs have none")
		}
	}
	var view string
	if err := some.DB.QueryRow(`SELECT sql FROM duckdb_views() WHERE view_name = 'kernels'`).Scan(&view); err != nil {
		t.Fatal(err)
	}
	for run, named := range map[string]bool{"sglang-llama": true, "trtllm-llama": true, "vllm-qwen-moe": false, "sglang-formal": false} {
		if got := strings.Contains(view, "/run="+run+"/"); got != named {
			t.Errorf("kernels view names files of %s: %v, want %v", run, got, named)
		}
	}
}

// TestFileLayout: a file's columns and layout read from its footer name
// what DuckDB's DESCRIBE names (nested columns too), files alike have one
// signature whatever their rows or their columns' order, a file of other
// columns or types another, and a file that is not Parquet is an error.
func TestFileLayout(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("duckdb", "?threads=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dir := t.TempDir()
	write := func(name, query string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if _, err := db.Exec(fmt.Sprintf(`COPY (%s) TO %s (FORMAT parquet, COMPRESSION zstd)`, query, literal(path))); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const cols = `SELECT 1::INTEGER AS a, [1, 2]::BIGINT[] AS l, {'x': 1, 'y': 'b'}::STRUCT(x INTEGER, y VARCHAR) AS s,
		[{'k': 'v'}]::STRUCT(k VARCHAR)[] AS ls, 'z' AS b, TIMESTAMP '2026-01-01' AS ts`
	base := write("base.parquet", cols)
	other := write("rows.parquet", `SELECT * REPLACE (7 AS a, [3]::BIGINT[] AS l) FROM (`+cols+`) UNION ALL `+cols)
	reordered := write("order.parquet", `SELECT b, ts, ls, s, l, a FROM (`+cols+`)`)
	fewer := write("fewer.parquet", `SELECT * EXCLUDE (b) FROM (`+cols+`)`)
	retyped := write("retyped.parquet", `SELECT * REPLACE (a::BIGINT AS a) FROM (`+cols+`)`)
	nested := write("nested.parquet", `SELECT * REPLACE ({'x': 1, 'y': 2}::STRUCT(x INTEGER, y INTEGER) AS s) FROM (`+cols+`)`)

	sig := map[string]string{}
	for _, f := range []string{base, other, reordered, fewer, retyped, nested} {
		got, s, err := fileLayout(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		sig[f] = s
		var want []string
		rows, err := db.Query(`SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet(?))`, f)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				t.Fatal(err)
			}
			want = append(want, c)
		}
		rows.Close()
		if !slices.Equal(got, want) {
			t.Errorf("%s: columns %v, DESCRIBE names %v", filepath.Base(f), got, want)
		}
	}
	if sig[base] != sig[other] || sig[base] != sig[reordered] {
		t.Errorf("files of one layout read as different layouts")
	}
	for _, f := range []string{fewer, retyped, nested} {
		if sig[f] == sig[base] {
			t.Errorf("%s reads as the layout of base.parquet", filepath.Base(f))
		}
	}

	for name, data := range map[string][]byte{
		"short.parquet":  []byte("PAR1"),
		"text.parquet":   []byte("PAR1 this is not a Parquet file PAR1"),
		"footer.parquet": append([]byte("PAR1 \x00\x01\x02\x03\x04\x05"), 6, 0, 0, 0, 'P', 'A', 'R', '1'),
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := fileLayouts(dir, []string{base, path}); err == nil || !strings.Contains(err.Error(), name+" is not a readable Parquet file") {
			t.Errorf("%s: err %v", name, err)
		}
	}
}
