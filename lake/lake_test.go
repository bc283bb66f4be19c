package lake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

const demo = "../testdata/demo"

var (
	demoOnce sync.Once
	demoPath string
	demoErr  error
)

// demoWarehouse is a warehouse file holding testdata/demo, ingested once
// per test binary (aggregates.FinishPerRun run); tests open it read-only.
// It holds every demo run but sglang-mapping, the eager run of
// sglang-llama's deployment (four traces of two ranks and two stages, as
// sglang-llama's, role mapping from its server args as sglang-llama's):
// a quarter of the demo's traces, which every lake these tests write,
// merge and read carried again (bench/README.md, "Fifty-ninth figures").
func demoWarehouse(t *testing.T) string {
	t.Helper()
	demoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lake-demo-")
		if err != nil {
			demoErr = err
			return
		}
		demoPath = filepath.Join(dir, "demo.duckdb")
		ctx := context.Background()
		w, err := schema.Open(ctx, demoPath, schema.Options{Threads: 1})
		if err != nil {
			demoErr = err
			return
		}
		defer w.Close()
		var runs []string
		for _, r := range []string{"sglang-formal", "sglang-llama", "tokenspeed-deepseek", "trtllm-llama", "vllm-qwen-moe"} {
			runs = append(runs, filepath.Join(demo, r))
		}
		res, err := ingest.Ingest(ctx, w, runs, ingest.Options{Jobs: 1})
		if err == nil && res.Failed() > 0 {
			err = fmt.Errorf("%d demo files failed", res.Failed())
		}
		if err == nil {
			err = aggregates.FinishPerRun(ctx, w.DB, catalog.Default())
		}
		demoErr = err
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoPath
}

func openDemo(t *testing.T) *schema.Warehouse {
	t.Helper()
	w, err := schema.Open(context.Background(), demoWarehouse(t), schema.Options{ReadOnly: true, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func TestMain(m *testing.M) {
	if os.Getenv("LAKE_TEST_CRASH_AFTER") != "" {
		crashRole()
	}
	if os.Getenv("LAKE_TEST_COMPACT_CRASH_AFTER") != "" {
		compactCrashRole()
	}
	code := schematest.Main(m)
	if opened != nil {
		opened.Close()
	}
	if demoPath != "" {
		os.RemoveAll(filepath.Dir(demoPath))
	}
	if lakeDir != "" {
		os.RemoveAll(lakeDir)
	}
	if halfDir != "" {
		os.RemoveAll(halfDir)
	}
	os.Exit(code)
}

// dump is every row of a table as sorted text lines.
func dump(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestExportRoundTrip: the demo warehouse written into an empty lake
// (demoLake's write) reads back every table through the lake's
// views: the same rows, ids included (an empty lake keeps the warehouse's
// ids). Writing it again (into a copy) adds nothing.
func TestExportRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := openDemo(t)
	lk := openDemoLake(t) // demoLake's, opened
	res := lakeWrite
	var traces int
	if err := src.DB.QueryRow(`SELECT count(*) FROM traces`).Scan(&traces); err != nil {
		t.Fatal(err)
	}
	if res.Written() != traces {
		t.Fatalf("wrote %d traces, want %d: %+v", res.Written(), traces, res.Traces)
	}
	for _, tb := range Tables {
		q := "SELECT * FROM " + tb.Name
		if tb.Name == "kernel_names" || tb.Name == "sites" {
			// the lake holds the names its traces use
			q += fmt.Sprintf(" WHERE %[1]s IN (SELECT %[1]s FROM kernels UNION SELECT %[1]s FROM launches UNION SELECT %[1]s FROM cpu_ops UNION SELECT %[1]s FROM py_frame_events)", tb.key)
			if tb.Name == "kernel_names" {
				q = "SELECT * FROM kernel_names WHERE name_id IN (SELECT name_id FROM kernels)"
			}
		}
		if tb.store == storeOverlap {
			// sweep positions are renumbered per trace
			q = "SELECT * EXCLUDE (start_rank, starts_before_end) FROM " + tb.Name
		}
		want, got := dump(t, src.DB, q), dump(t, lk.DB, q)
		if len(want) == 0 {
			t.Errorf("%s: the demo warehouse has no rows", tb.Name)
		}
		if !slices.Equal(want, got) {
			t.Errorf("%s: lake has %d rows, warehouse %d; first difference:\n%s", tb.Name, len(got), len(want), firstDiff(want, got))
		}
	}
	// Writing again adds nothing.
	res, err := Write(ctx, src.DB, copyLake(t), WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Written() != 0 || len(res.Traces) != traces {
		t.Errorf("second write: %d written of %d", res.Written(), len(res.Traces))
	}
}

func firstDiff(a, b []string) string {
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return "warehouse: " + trunc(x) + "\nlake:      " + trunc(y)
		}
	}
	return ""
}

func trunc(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return strings.TrimSpace(s)
}

// crashRole, run by TestMain in a child process, writes a run of the demo
// warehouse into a lake and dies (os.Exit: no deferred cleanup, like a
// kill) right after the N-th file it moves into place.
func crashRole() {
	n, _ := strconv.Atoi(os.Getenv("LAKE_TEST_CRASH_AFTER"))
	run, _ := strconv.ParseInt(os.Getenv("LAKE_TEST_RUN"), 10, 64)
	ctx := context.Background()
	// one DuckDB thread, as the tests' own opens: the warehouse is tiny
	w, err := schema.Open(ctx, os.Getenv("LAKE_TEST_SOURCE"), schema.Options{ReadOnly: true, Threads: 1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	count := 0
	testHookMoved = func(string) {
		if count++; count == n {
			os.Exit(3)
		}
	}
	_, err = Write(ctx, w.DB, os.Getenv("LAKE_TEST_DIR"), WriteOptions{Runs: []int64{run}, Batch: 6})
	fmt.Fprintf(os.Stderr, "finished without crashing after %d files: %v\n", count, err)
	os.Exit(0)
}

// TestKilledWriteLeavesNothingPartial kills writers of a run right after
// their n-th file lands (right before a commit; right after one, mid-way
// through the next trace): the lake shows exactly the committed traces,
// each whole; writing again finishes the job and the lake then holds
// every trace of the run whole.
func TestKilledWriteLeavesNothingPartial(t *testing.T) {
	t.Parallel()
	src := openDemo(t)
	ctx := context.Background()
	dir := t.TempDir()
	perTrace := rowsPerTrace(t, src)
	// the first demo run, of four traces (the whole demo, 16, cost 0.3
	// CPU-s more to write again and to count, for the same states)
	ids, _ := demoRuns(t, src.DB)
	var traces int
	if err := src.DB.QueryRow(`SELECT count(*) FROM traces WHERE run_id = ?`, ids[0]).Scan(&traces); err != nil {
		t.Fatal(err)
	}
	committed, sawLeftovers := 0, false
	// Files land trace by trace; of the first trace's 18, the 17th is its
	// record and the 18th its commit (traces/<hash>.parquet): killed right
	// before a commit (every file and the record of a trace, no commit),
	// then right after one (files of the next trace landed), the
	// second writer starting over the first one's leftovers. (A kill
	// mid-way through the first trace, before these, left what the second
	// kill leaves of the next trace, and cost a child and a read.)
	for _, after := range []int{17, 19} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "LAKE_TEST_CRASH_AFTER="+strconv.Itoa(after),
			"LAKE_TEST_SOURCE="+demoWarehouse(t), "LAKE_TEST_RUN="+strconv.FormatInt(ids[0], 10), "LAKE_TEST_DIR="+dir)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 3 {
			t.Fatalf("after %d files: want exit 3, got %v: %s", after, err, out)
		}
		n := checkCommitted(t, dir, perTrace)
		if leftovers(t, dir) > 0 {
			sawLeftovers = true
		}
		if n < committed {
			t.Errorf("after %d files: %d traces committed, fewer than before (%d)", after, n, committed)
		}
		committed = n
		t.Logf("killed after %d files: %d traces committed", after, n)
	}
	if committed == 0 || committed == traces || !sawLeftovers {
		t.Errorf("%d of %d traces committed, leftovers seen: %v: the kills tested nothing", committed, traces, sawLeftovers)
	}
	res, err := Write(ctx, src.DB, dir, WriteOptions{Runs: ids[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if res.Written() != traces-committed {
		t.Errorf("the re-run wrote %d traces, want %d", res.Written(), traces-committed)
	}
	if n := checkCommitted(t, dir, perTrace); n != traces {
		t.Errorf("%d traces after the re-run, want %d", n, traces)
	}
	// The killed writers' temporary directories went with the re-run
	// (their processes are gone), and it removed its own.
	if ents, err := os.ReadDir(filepath.Join(dir, metaDir, "tmp")); err != nil || len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left in _tracehouse/tmp: %v %v", names, err)
	}
}

// rowsPerTrace are the rows of each table kept per trace, by content hash
// and table, in the warehouse src.
func rowsPerTrace(t *testing.T, src *schema.Warehouse) map[string]map[string]int64 {
	t.Helper()
	perTrace := map[string]map[string]int64{} // content hash -> table -> rows
	for _, tb := range Tables {
		if tb.layout == byRun || tb.layout == dimension {
			continue
		}
		rows, err := src.DB.Query(fmt.Sprintf(`SELECT t.content_hash, count(x.trace_id) FROM traces t LEFT JOIN %s x USING (trace_id) GROUP BY 1`, tb.Name))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var h string
			var n int64
			if err := rows.Scan(&h, &n); err != nil {
				t.Fatal(err)
			}
			if perTrace[h] == nil {
				perTrace[h] = map[string]int64{}
			}
			perTrace[h][tb.Name] = n
		}
		rows.Close()
	}
	return perTrace
}

// checkCommitted opens the lake, checks every visible trace holds exactly
// its rows and no other row shows, and returns the number of traces.
func checkCommitted(t *testing.T, dir string, perTrace map[string]map[string]int64) int {
	t.Helper()
	lk, err := Open(context.Background(), dir, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	var hashes []string
	rows, err := lk.DB.Query(`SELECT content_hash FROM traces`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var h string
		rows.Scan(&h)
		hashes = append(hashes, h)
	}
	rows.Close()
	for _, tb := range Tables {
		if tb.layout == byRun || tb.layout == dimension {
			continue
		}
		// each visible trace's rows, and the rows of no visible trace,
		// in one scan of the table's files (a query per trace was most
		// of this test's time)
		rows, err := lk.DB.Query(fmt.Sprintf(`SELECT t.content_hash, count(*) FROM %s x LEFT JOIN traces t USING (trace_id) GROUP BY 1`, tb.Name))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		var orphans int64
		for rows.Next() {
			var h sql.NullString
			var n int64
			if err := rows.Scan(&h, &n); err != nil {
				t.Fatal(err)
			}
			if !h.Valid {
				orphans = n
				continue
			}
			got[h.String] = n
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			t.Fatal(err)
		}
		for _, h := range hashes {
			if got[h] != perTrace[h][tb.Name] {
				t.Errorf("trace %s: %s has %d rows, want %d", h, tb.Name, got[h], perTrace[h][tb.Name])
			}
		}
		if orphans != 0 {
			t.Errorf("%s: %d rows visible of no committed trace", tb.Name, orphans)
		}
	}
	var runs, orphanRuns int64
	if err := lk.DB.QueryRow(`SELECT count(*), count(*) FILTER (WHERE run_id NOT IN (SELECT run_id FROM traces)) FROM runs`).Scan(&runs, &orphanRuns); err != nil {
		t.Fatal(err)
	}
	if orphanRuns != 0 {
		t.Errorf("%d runs without a committed trace are visible", orphanRuns)
	}
	return len(hashes)
}

// leftovers counts the files of traces not committed (a killed writer's).
func leftovers(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == metaDir {
			return filepath.SkipDir
		}
		name := d.Name()
		if d.IsDir() || !strings.HasSuffix(name, ".parquet") || strings.HasPrefix(name, "_") || strings.HasPrefix(p, filepath.Join(dir, "runs")) {
			return nil
		}
		if _, err := os.Stat(filepath.Join(dir, "traces", name)); errors.Is(err, fs.ErrNotExist) {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOpenFilesOfTwoLayouts: a table whose files hold different columns (a
// lake written by an older tracehouse, then added to) still opens; rows
// of a file without a column show NULL there, the others their values.
// The files an opened lake reads are listed once: a file added after Open
// stays out of its views.
func TestOpenFilesOfTwoLayouts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := openDemo(t)
	dir := copyLake(t) // every demo run written
	files, err := filepath.Glob(filepath.Join(dir, "steps", "run=sglang-llama", "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no steps files of sglang-llama: %v", err)
	}
	old := files[0]
	db, err := sql.Open("duckdb", "?threads=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var oldRows, oldEdges int
	if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE edge) FROM read_parquet(?)`, old).Scan(&oldRows, &oldEdges); err != nil {
		t.Fatal(err)
	}
	// The file as a build without steps.edge would have written it.
	tmp := old + ".tmp"
	if _, err := db.Exec(fmt.Sprintf(`COPY (SELECT * EXCLUDE (edge) FROM read_parquet('%s')) TO '%s' (FORMAT parquet)`, old, tmp)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, old); err != nil {
		t.Fatal(err)
	}
	// That build kept no checksums either.
	if err := os.RemoveAll(filepath.Join(dir, metaDir, sumsDir)); err != nil {
		t.Fatal(err)
	}
	var want, wantEdges int
	if err := src.DB.QueryRow(`SELECT count(*), count(*) FILTER (WHERE edge) FROM steps`).Scan(&want, &wantEdges); err != nil {
		t.Fatal(err)
	}
	lk, err := Open(ctx, dir, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	// Added after Open: not read.
	if _, err := db.Exec(fmt.Sprintf(`COPY (SELECT * FROM read_parquet('%s')) TO '%s' (FORMAT parquet)`,
		files[len(files)-1], filepath.Join(dir, "steps", "late.parquet"))); err != nil {
		t.Fatal(err)
	}
	var rows, edges, nulls int
	if err := lk.DB.QueryRow(`SELECT count(*), count(*) FILTER (WHERE edge), count(*) FILTER (WHERE edge IS NULL) FROM steps`).Scan(&rows, &edges, &nulls); err != nil {
		t.Fatal(err)
	}
	if oldRows == 0 || rows != want || nulls != oldRows || edges != wantEdges-oldEdges {
		t.Errorf("steps over two layouts: %d rows (%d edges, %d NULL); want %d (%d edges, %d NULL)",
			rows, edges, nulls, want, wantEdges-oldEdges, oldRows)
	}
}
