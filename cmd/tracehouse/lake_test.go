package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/tracehouse/tracehouse/lake"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/synth"
	"github.com/tracehouse/tracehouse/target"
)

// TestLakeEndToEnd: the demo in a warehouse, exported into a lake, and
// ingested straight into another lake; the subtests read them.
func TestLakeEndToEnd(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	db := demoCopy(t)
	exported := filepath.Join(tmp, "exported")
	ingested := filepath.Join(tmp, "ingested")
	code, _, stderr := runCmd(t, "--db", db, "export", "--lake", exported)
	if code != 0 || unwrap(stderr) != fmt.Sprintf("exported 16 trace(s) of 6 run(s) to %s\n", exported) {
		t.Fatalf("export: exit %d: %q", code, stderr)
	}
	code, _, stderr = runCmd(t, "--db", db, "export", "--lake", exported, "sglang-llama")
	if code != 0 || unwrap(stderr) != fmt.Sprintf("exported 0 trace(s) of 0 run(s) to %s, 4 already there\n", exported) {
		t.Errorf("export again: exit %d: %q", code, stderr)
	}
	code, _, stderr = runCmd(t, "--lake", ingested, "ingest", "--jobs", "1", demoDir)
	if code != 0 || !strings.HasPrefix(stderr, "ingested 16 file(s)") {
		t.Fatalf("ingest --lake: exit %d: %q", code, stderr)
	}
	code, _, stderr = runCmd(t, "--lake", ingested, "ingest", demoDir)
	if code != 0 || !strings.Contains(stderr, "ingested 0 file(s) (0 events, 0 GPU events, 0.0 MB of JSON), 16 already ingested") {
		t.Errorf("ingest --lake again: exit %d: %q", code, stderr)
	}
	for _, c := range []struct {
		name string
		test func(*testing.T, string, string, string)
	}{
		{"ReportsEqual", testLakeReportsEqual},
		{"SQL", testLakeSQL},
		{"SQLArrow", testLakeSQLArrow},
		{"Schema", testLakeSchema},
		{"Errors", testLakeErrors},
		{"Damaged", testLakeDamaged},
		{"Compact", testLakeCompact},
	} {
		// Each subtest only reads the two lakes and the warehouse (those
		// that change a lake change a copy): they run in parallel, beside
		// the package's other tests, rather than one after another.
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, db, exported, ingested)
		})
	}
}

// testLakeReportsEqual: triage (single- and two-trace), compare and runs
// over the exported lake print exactly what they print over the
// warehouse. (The ingested lake's reports: testLakeCompact's, over a
// compacted copy of it, which holds the rows the ingest wrote.)
func testLakeReportsEqual(t *testing.T, db, exported, ingested string) {
	for _, args := range lakeReports {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			t.Parallel()
			lakeReportEqual(t, exported, args)
		})
	}
	// runs: the export keeps the ingest times, the direct ingest has its own
	_, want, _ := demoOnce(t, "runs", "--format", "json")
	if _, got, _ := runCmd(t, "--lake", exported, "runs", "--format", "json"); got != want {
		t.Errorf("runs over the exported lake:\n%s\nwant\n%s", got, want)
	}
}

// lakeReports are the reports a lake must print as the warehouse does:
// one per run (a lake takes labels, not the demo's path), every rank,
// two-trace, compare. (Text, a rendering of the report JSON holds whole:
// testLakeCompact's triage of vllm-qwen-moe, over the compacted lake.)
var lakeReports = [][]string{
	{"triage", "--format", "json", "sglang-llama", "tokenspeed-deepseek", "trtllm-llama", "vllm-qwen-moe"},
	{"triage", "--rank", "all", "--format", "json", "sglang-mapping"},
	{"triage", "--mapping", "sglang-mapping", "--formal", "sglang-formal", "--format", "json"},
	{"compare", "sglang-llama", "sglang-formal", "--format", "json"},
}

// lakeReportEqual: the command line args prints over the lake lk what it
// prints over the demo warehouse (its exit status, stdout and stderr).
func lakeReportEqual(t *testing.T, lk string, args []string) {
	t.Helper()
	// The demo warehouse's report, run once per test binary (on a copy
	// of the warehouse db is a copy of).
	wcode, want, wstderr := demoOnce(t, args...)
	code, got, stderr := runCmd(t, append([]string{"--lake", lk}, args...)...)
	if wcode != 0 || code != wcode || got != want || stderr != wstderr {
		t.Errorf("%v over %s: exit %d, stderr %q (warehouse: exit %d %q); output equal: %v", args, filepath.Base(lk), code, stderr, wcode, wstderr, got == want)
	}
}

// lakeCountsSQL counts the rows of every table and view (and sums the
// kernels' time): a lake must give the warehouse's figures. Its last
// column is a column's comment as duckdb_columns reads it (testLakeSchema:
// a lake describes its columns as the warehouse does).
const lakeCountsSQL = `SELECT (SELECT count(*) FROM kernel_events), (SELECT count(DISTINCT kernel_id) FROM kernels),
	(SELECT count(*) FROM launches), (SELECT count(*) FROM cpu_ops), (SELECT count(*) FROM py_frames),
	(SELECT count(*) FROM annotations), (SELECT count(*) FROM steps), (SELECT count(*) FROM traces),
	(SELECT count(*) FROM runs), (SELECT count(*) FROM kernel_overlap_store), (SELECT count(*) FROM step_total_store),
	(SELECT sum(dur_ns) FROM kernels), (SELECT count(*) FROM overlap_kernels('sglang-llama')),
	(SELECT comment FROM duckdb_columns() WHERE table_name = 'traces' AND column_name = 'content_hash') AS comment`

// testLakeSQL: every table and view of the exported lake holds the
// warehouse's rows (the ingested lake's: testLakeCompact's, over a
// compacted copy of it), and a column's comment is the warehouse's.
func testLakeSQL(t *testing.T, db, exported, ingested string) {
	lakeReportEqual(t, exported, []string{"sql", "--format", "csv", lakeCountsSQL})
	// the comment compared is one (csv: the header, then the row: 13
	// counts and the comment)
	_, want, _ := demoOnce(t, "sql", "--format", "csv", lakeCountsSQL)
	lines := strings.Split(strings.TrimSpace(want), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], ",comment") || len(strings.SplitN(lines[1], ",", 14)) != 14 ||
		len(strings.SplitN(lines[1], ",", 14)[13]) < 20 {
		t.Errorf("the warehouse's counts and comment: %q", want)
	}
}

// testLakeSchema: `schema` over a lake gives every object, column and
// macro the warehouse's description (an event table is a view there; the
// saved-copy bookkeeping has the lake's own). (A query of duckdb_columns
// gets the warehouse's comment too: lakeCountsSQL's last column.)
func testLakeSchema(t *testing.T, db, exported, ingested string) {
	// parse reads the output of `schema [OBJECT] --format json`.
	parse := func(out string) map[string]string {
		t.Helper()
		var rows []schemaJSON
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, r := range rows {
			m[r.Name] = r.Description
		}
		return m
	}
	own := map[string]bool{"kernel_overlap_runs": true, "step_store_runs": true, "device_busy_store": true}
	// (the lake's bookkeeping views keep the columns, so the descriptions,
	// of the warehouse tables they stand for)
	objects := schemaObjectsRead
	// (the warehouse's: the demo's rows, read once per test binary)
	wants := demoSchemaRows(t, objects...)
	io, _, _ := testIO("")
	gots := schemaOutputs(t, (&Factory{IO: io, Getenv: testEnv, lake: exported}).warehouse(), "json", objects)
	for _, object := range objects {
		var args []string
		if object != "" {
			args = append(args, object)
		}
		want, got := parse(schemaPrinted(t, wants[object], "json", -1, args...)), parse(gots[object])
		described := 0
		for name, d := range want {
			if own[name] {
				// the lake's bookkeeping, described in its own words
				if got[name] == "" || got[name] == d {
					t.Errorf("schema: %s over the lake: %q", name, got[name])
				}
				continue
			}
			if got[name] != d {
				t.Errorf("schema %s: %s over the lake: %q, want %q", object, name, got[name], d)
			}
			if d != "" {
				described++
			}
		}
		if described < 3 {
			t.Errorf("schema %s: only %d descriptions", object, described)
		}
	}
}

// schemaOutputs is what `schema [OBJECT] --format format` prints for
// each of objects ("" for the list), by the command's own steps (open,
// describe, read the object's rows, print them: schemaRun) on one open
// of the lake (or warehouse) open opens, rather than one open per object:
// an open of a lake, or of a warehouse whose SQL library is older than
// the binary, costs more than the rows it reads here.
func schemaOutputs(t *testing.T, open target.Opener, format string, objects []string) map[string]string {
	t.Helper()
	ctx := context.Background()
	w, err := open(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// (a no-op after the first time, as for a command's one object)
	if err := lake.Describe(ctx, w); err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{}
	for _, object := range objects {
		var args []string
		if object != "" {
			args = append(args, object)
		}
		opts := parseCmd(t, "unused.duckdb", format, newCmdSchema, args...)
		io, out, _ := testIO("")
		opts.IO = io
		rows, err := queries.SchemaObjects(ctx, w.DB, opts.Object)
		if err != nil {
			t.Fatalf("schema %s: %v", object, err)
		}
		if err := schemaPrint(opts, rows); err != nil {
			t.Fatalf("schema %s: %v", object, err)
		}
		outs[object] = out.String()
	}
	return outs
}

// testLakeSQLArrow: `sql --format arrow` over a lake, read back by
// arrow-go's IPC reader.
func testLakeSQLArrow(t *testing.T, db, exported, ingested string) {
	code, out, stderr := runCmd(t, "--lake", exported, "sql", "--format", "arrow",
		`SELECT run, kernel_id, short_name, dur_ns, graph_launch, stage FROM kernel_events ORDER BY kernel_id`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := ipc.NewReader(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	want := "schema:\n  fields: 6\n    - run: type=utf8, nullable\n    - kernel_id: type=int64, nullable\n    - short_name: type=utf8, nullable\n    - dur_ns: type=int64, nullable\n    - graph_launch: type=bool, nullable\n    - stage: type=utf8, nullable"
	if got := r.Schema().String(); got != want {
		t.Errorf("schema:\n%s\nwant\n%s", got, want)
	}
	var rows, sum int64
	prev := int64(-1)
	for r.Next() {
		rec := r.RecordBatch()
		rows += rec.NumRows()
		for i, id := range rec.Column(1).(*array.Int64).Int64Values() {
			if id <= prev {
				t.Fatalf("kernel_id %d after %d", id, prev)
			}
			prev = id
			sum += rec.Column(3).(*array.Int64).Value(i)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	// The warehouse's figures: lakeCountsSQL's count of kernel_events
	// (its first column) and sum of the kernels' time (its twelfth), from
	// the run testLakeSQL and testLakeCompact compare (csv: the header,
	// then the row).
	_, csv, _ := demoOnce(t, "sql", "--format", "csv", lakeCountsSQL)
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) != 2 {
		t.Fatalf("the warehouse's counts: %q", csv)
	}
	w := strings.SplitN(lines[1], ",", 14)
	if got := fmt.Sprintf("%d,%d", rows, sum); len(w) != 14 || got != w[0]+","+w[11] {
		t.Errorf("arrow stream: %s rows,ns; warehouse: %q", got, w)
	}
}

func testLakeErrors(t *testing.T, db, exported, ingested string) {
	empty := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--lake", exported, "rm", "sglang-llama"}, 2, "--lake: 'tracehouse rm' changes stored rows"},
		{[]string{"--lake", exported, "reclassify"}, 2, "--lake: 'tracehouse reclassify' changes stored rows"},
		{[]string{"--lake", exported, "--db", db, "runs"}, 2, "--db and --lake both name where runs are"},
		{[]string{"--db", db, "export", "sglang-llama"}, 2, "export writes a lake: add --lake DIR"},
		{[]string{"--db", db, "export", "--lake", empty, "no-such-run"}, 1, `no run labelled "no-such-run" in `},
		{[]string{"--lake", exported, "ingest", "--replace", demoDir}, 2, "--replace: a lake's traces never change"},
		{[]string{"--lake", exported, "triage", demoDir + "/trtllm-llama"}, 1, "is a path, and a lake is only read here: ingest it with 'tracehouse ingest --lake"},
		{[]string{"--lake", empty, "runs"}, 1, "is not a tracehouse lake (no _tracehouse/schema_version)"},
		// (a run a lake lacks: TestLakePolicy's, whose messages over a
		// lake are the warehouse's with the lake's path)
	} {
		code, _, stderr := runCmd(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d %q, want exit %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
	// Binary output never goes to a terminal.
	io, _, errOut := testIO("")
	io.OutTTY = true
	if code := run([]string{"--lake", exported, "sql", "--format", "arrow", "SELECT 1"}, io, testEnv); code != 2 ||
		!strings.Contains(errOut.String(), "--format arrow writes binary") {
		t.Errorf("arrow to a terminal: exit %d %q", code, errOut.String())
	}
}

// testLakeDamaged: a read command over a lake with a damaged file warns,
// naming the file, leaves that file's run out and shows the others (exit
// 0); naming the damaged run finds no such run.
func testLakeDamaged(t *testing.T, db, exported, ingested string) {
	dir := filepath.Join(t.TempDir(), "lake")
	if err := os.CopyFS(dir, os.DirFS(ingested)); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "kernels", "run=trtllm-llama", "*", "*", "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no kernels file of trtllm-llama: %v", err)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(files[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(dir, files[0])
	warning := fmt.Sprintf("warning: lake %s: %s is damaged (its checksum differs from the one recorded when it was written): run trtllm-llama is left out; ",
		dir, filepath.ToSlash(rel))
	code, out, stderr := runCmd(t, "--lake", dir, "runs")
	if code != 0 || !strings.HasPrefix(unwrap(stderr), warning) || strings.Count(unwrap(stderr), "\n") != 1 ||
		strings.Contains(out, "trtllm-llama") || !strings.Contains(out, "sglang-llama") {
		t.Errorf("runs: exit %d\nstderr %q\nstdout %s", code, stderr, out)
	}
	code, _, stderr = runCmd(t, "--lake", dir, "triage", "trtllm-llama")
	if code != 1 || !strings.HasPrefix(unwrap(stderr), warning) {
		t.Errorf("triage of the damaged run: exit %d %q", code, stderr)
	}
}

// testLakeCompact: compact merges the ingested lake's 16 traces into one
// generation; reports and every table's counts over it are the
// warehouse's; compacting again changes nothing; compact wants --lake.
func testLakeCompact(t *testing.T, db, exported, ingested string) {
	dir := filepath.Join(t.TempDir(), "lake")
	if err := os.CopyFS(dir, os.DirFS(ingested)); err != nil {
		t.Fatal(err)
	}
	oneLine := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	code, _, stderr := runCmd(t, "--lake", dir, "compact", "--grace", "0")
	if want := fmt.Sprintf("merged 16 trace(s) into generation 1 of %s: 16 trace(s) in 1 chunk(s), 0 read from their own files", dir); code != 0 || oneLine(stderr) != want {
		t.Fatalf("compact: exit %d: %q, want %q", code, stderr, want)
	}
	code, _, stderr = runCmd(t, "--lake", dir, "compact")
	if want := fmt.Sprintf("nothing new to merge in %s: generation 1 holds 16 trace(s) in 1 chunk(s), 0 read from their own files", dir); code != 0 || oneLine(stderr) != want {
		t.Errorf("compact again: exit %d: %q, want %q", code, stderr, want)
	}
	// The rows the ingest wrote into the lake, and the compacted
	// generation that holds them, give the warehouse's reports (those of
	// lakeReports that read several runs or ranks) and counts. (Over
	// files a trace each: the exported lake's, testLakeReportsEqual.)
	for _, args := range [][]string{
		{"triage", "--rank", "all", "--format", "json", "sglang-mapping"},
		{"compare", "sglang-llama", "sglang-formal", "--format", "json"},
		{"triage", "vllm-qwen-moe"},
		{"sql", "--format", "csv", lakeCountsSQL},
	} {
		lakeReportEqual(t, dir, args)
	}
	if code, _, stderr := runCmd(t, "--db", db, "compact"); code != 2 || !strings.Contains(stderr, "compact merges a lake's files: add --lake DIR") {
		t.Errorf("compact without --lake: exit %d %q", code, stderr)
	}
}

// TestLakeConcurrentIngest: two ingest processes write different files
// into one new lake at the same time, one run (sglang-llama) split between
// them so they claim its run, its names and its sites together. Both
// succeed, and the lake holds every row of a warehouse ingest of all the
// files exactly once: the demo warehouse's rows of those three runs (an
// ingest's rows do not depend on what else the warehouse holds, but for
// ids; every name and site row of a warehouse is one its rows use), and no
// other.
func TestLakeConcurrentIngest(t *testing.T) {
	t.Parallel()
	llama, err := filepath.Glob(demoDir + "/sglang-llama/*/*.trace.json.gz")
	if err != nil || len(llama) != 4 {
		t.Fatalf("demo files: %v %v", llama, err)
	}
	sets := [][]string{
		{llama[0], llama[1], demoDir + "/sglang-formal"},
		{llama[2], llama[3], demoDir + "/tokenspeed-deepseek"},
	}
	dir := filepath.Join(t.TempDir(), "lake")
	var wg sync.WaitGroup
	outs := make([]string, len(sets))
	codes := make([]int, len(sets))
	spans := make([][2]time.Time, len(sets))
	for i, paths := range sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], append([]string{"--lake", dir, "ingest", "--jobs", "1"}, paths...)...)
			cmd.Env = append(os.Environ(), "TRACEHOUSE_TEST_ROLE=main", "TRACEHOUSE_THREADS=1")
			spans[i][0] = time.Now()
			out, err := cmd.CombinedOutput()
			spans[i][1] = time.Now()
			outs[i] = string(out)
			if err != nil {
				codes[i] = -1
				if e, ok := err.(*exec.ExitError); ok {
					codes[i] = e.ExitCode()
				}
			}
		}()
	}
	wg.Wait()
	for i := range sets {
		if codes[i] != 0 {
			t.Fatalf("ingest %d: exit %d: %s", i, codes[i], outs[i])
		}
	}
	if spans[0][1].Before(spans[1][0]) || spans[1][1].Before(spans[0][0]) {
		// The scenario is two writers at once: one after the other tests
		// nothing the single-writer tests do not.
		t.Errorf("the two ingests did not run at the same time: %v", spans)
	}
	// counts counts every row of the lake, and those of the three runs in
	// the demo warehouse (runs, the rows of their traces, the names and
	// sites those rows use); its header is the same either way.
	counts := func(runs string) string {
		inRuns, tr, used := "", "", ""
		if runs != "" {
			inRuns = " WHERE label IN (" + runs + ")"
			tr = " WHERE trace_id IN (SELECT trace_id FROM traces JOIN runs USING (run_id)" + inRuns + ")"
			used = " WHERE name_id IN (SELECT name_id FROM kernels" + tr + ")"
		}
		sites := "SELECT site_id FROM kernels" + tr + " UNION SELECT site_id FROM launches" + tr +
			" UNION SELECT site_id FROM cpu_ops" + tr + " UNION SELECT site_id FROM py_frame_events" + tr
		allSites := ""
		if runs != "" {
			allSites = " WHERE site_id IN (" + sites + ")"
		}
		return `SELECT (SELECT count(*) FROM runs` + inRuns + `) AS runs, (SELECT count(*) FROM traces` + tr + `) AS traces,
		(SELECT count(DISTINCT content_hash) FROM traces` + tr + `) AS hashes, (SELECT count(*) FROM kernels` + tr + `) AS kernels,
		(SELECT count(DISTINCT kernel_id) FROM kernels` + tr + `) AS kernel_ids, (SELECT count(*) FROM kernel_events` + tr + `) AS kernel_events,
		(SELECT count(*) FROM launches` + tr + `) AS launches, (SELECT count(DISTINCT launch_id) FROM launches` + tr + `) AS launch_ids,
		(SELECT count(*) FROM cpu_ops` + tr + `) AS cpu_ops, (SELECT count(*) FROM py_frames` + tr + `) AS py_frames,
		(SELECT count(*) FROM annotations` + tr + `) AS annotations, (SELECT count(*) FROM steps` + tr + `) AS steps,
		(SELECT count(*) FROM kernel_names` + used + `) AS names, (SELECT count(DISTINCT name) FROM kernel_names` + used + `) AS distinct_names,
		(SELECT count(*) FROM sites` + allSites + `) AS sites, (SELECT count(DISTINCT name) FROM sites WHERE site_id IN (` + sites + `)) AS distinct_sites,
		(SELECT sum(dur_ns) FROM kernels` + tr + `) AS dur_ns, (SELECT count(*) FROM kernel_overlap_store` + tr + `) AS overlap_rows`
	}
	db := demoCopy(t)
	_, want, _ := runCmd(t, "--db", db, "sql", "--format", "csv", counts("'sglang-llama', 'sglang-formal', 'tokenspeed-deepseek'"))
	code, got, stderr := runCmd(t, "--lake", dir, "sql", "--format", "csv", counts(""))
	if code != 0 || got != want || !strings.HasPrefix(want, "runs,") || !strings.Contains(want, "\n3,9,9,") {
		t.Errorf("lake: exit %d %s\n%s\nwant (warehouse)\n%s", code, stderr, got, want)
	}
	// The split run reads as one: its triage equals the warehouse's but
	// for the ids, and the label (files given one by one, the run is
	// named by their timestamp directory; the demo's, by its directory).
	label := filepath.Base(filepath.Dir(llama[0]))
	// (the demo's report as `triage sglang-llama --rank all` prints it:
	// llamaRankAll's, printed by its print step)
	w := printTriage(t, llamaRankAll(t), "table", "", -1, llamaRankAllArgs...)
	code, l, stderr := runCmd(t, "--lake", dir, "triage", label, "--rank", "all")
	if want := strings.Replace(w, "Run: sglang-llama ", "Run: "+label+" ", 1); code != 0 || l != want || want == w {
		t.Errorf("triage of the split run %s: exit %d %s\n%s", label, code, stderr, firstDiff(l, want))
	}
}

// TestLakeKilledIngest kills `ingest --lake` processes while they write
// into the lake: once their write has begun (a batch directory appears
// under _tracehouse/tmp), then once one more trace is committed (over the
// first one's leftovers): every visible trace is whole, nothing else
// shows, and the same command then finishes the lake (over the second
// one's). (The lake package's TestKilledWriteLeavesNothingPartial kills
// writers after an exact number of files, each over the last one's
// leftovers: mid-trace, right before a commit, right after one.)
func TestLakeKilledIngest(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	// traces adds a run of eight small traces to src (another seed:
	// other contents) and returns how many src then holds.
	files, runs := 0, 0
	traces := func() int {
		runs++
		m, err := synth.Generate(synth.Options{Framework: "vllm", Dir: src, Run: fmt.Sprintf("r%d", runs), Ranks: 8, TargetBytes: 64 << 10, Seed: int64(10 + runs)})
		if err != nil {
			t.Fatal(err)
		}
		files += len(m.Files)
		return files
	}
	dir := filepath.Join(t.TempDir(), "lake")
	traceFiles := func() int {
		m, _ := filepath.Glob(filepath.Join(dir, "traces", "[0-9a-f]*.parquet"))
		return len(m)
	}
	// A writer copies a batch of up to 32 traces (lake.WriteOptions),
	// then commits them a trace at a time, closely after each other. A
	// kill once one more trace is committed lands with traces left to
	// commit, on a loaded host too, when more than a batch is left: so
	// before each kill src holds more than a batch of traces the lake
	// lacks. (With two left, a loaded host missed every try.)
	const batch = 32
	var prev int
	for _, when := range []string{"writing", "committed"} {
		// On a loaded host the kill may still come after the writer's
		// last commit (the poll waits for a core while the writer commits
		// on): the scenario is then tried again with a batch more of
		// traces, three times at most.
		for try := 1; ; try++ {
			for files-traceFiles() <= batch {
				traces()
			}
			from := []string{src}
			if when == "writing" {
				// A write begins whatever it holds: two runs of src the
				// lake lacks (16 traces, not the 40 a later kill needs)
				// are enough to kill it at; the later writers, given all
				// of src, find its leftovers.
				from = []string{filepath.Join(src, fmt.Sprintf("r%d", runs-1)), filepath.Join(src, fmt.Sprintf("r%d", runs))}
			}
			n, stopped := killLakeIngest(t, dir, from, when, traceFiles)
			t.Logf("killed once %s (try %d): %d of %d traces in the lake", when, try, n, files)
			if n < prev {
				t.Errorf("traces went from %d to %d", prev, n)
			}
			prev = n
			if stopped && n < files {
				break
			}
			if try == 3 {
				t.Errorf("the kill once %s did not stop a writer with traces left to commit (%d of %d in the lake), three times", when, n, files)
				break
			}
		}
	}
	if code, _, stderr := runCmd(t, "--lake", dir, "ingest", src); code != 0 {
		t.Fatalf("re-run: exit %d %s", code, stderr)
	}
	if n := lakeConsistent(t, dir); n != files {
		t.Errorf("%d traces after the re-run, want %d", n, files)
	}
}

// killLakeIngest starts `ingest --lake dir SRC...` and kills it when its
// write has begun (when "writing": a batch directory exists) or once one
// more trace is committed (traces counts them); it returns the traces the
// lake then holds (each whole: lakeConsistent) and whether the kill
// stopped the writer (false: it had ended by itself).
func killLakeIngest(t *testing.T, dir string, src []string, when string, traces func() int) (n int, stopped bool) {
	t.Helper()
	before := traces()
	cmd := exec.Command(os.Args[0], append([]string{"--lake", dir, "ingest", "--jobs", "2"}, src...)...)
	cmd.Env = append(os.Environ(), "TRACEHOUSE_TEST_ROLE=main", "TRACEHOUSE_THREADS=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	seen, ended := false, false
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline) && !seen && !ended; time.Sleep(5 * time.Millisecond) {
		select {
		case <-exited:
			ended = true // it finished before the point: nothing to kill
		default:
		}
		if when == "writing" {
			m, _ := filepath.Glob(filepath.Join(dir, "_tracehouse", "tmp", fmt.Sprintf("w%d.*", cmd.Process.Pid), "b0"))
			seen = len(m) > 0
		} else {
			seen = traces() > before
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	if !seen {
		// The scenario is a writer killed at that point: an ingest
		// that ended first, or never got there, tests nothing.
		t.Logf("the ingest was not killed once %s (it ended first: %v)", when, ended)
	}
	st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return lakeConsistent(t, dir), seen && ok && st.Signaled() && st.Signal() == syscall.SIGKILL
}

// lakeConsistent checks that every trace of the lake holds all its GPU
// events, Python frames and launches, that no row belongs to a trace the
// lake does not show, and returns the number of traces (0 when the lake
// does not exist yet).
func lakeConsistent(t *testing.T, dir string) int {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "_tracehouse", "schema_version")); err != nil {
		return 0
	}
	q := `SELECT (SELECT count(*) FROM traces),
	  (SELECT count(*) FROM traces t WHERE kernel_events + memcpy_events + memset_events
	     <> (SELECT count(*) FROM kernels k WHERE k.trace_id = t.trace_id)
	   OR py_frame_events <> (SELECT count(*) FROM py_frame_events f WHERE f.trace_id = t.trace_id)),
	  (SELECT count(*) FROM kernels) - (SELECT count(DISTINCT kernel_id) FROM kernels)`
	code, out, stderr := runCmd(t, "--lake", dir, "sql", "--format", "csv", q)
	if code != 0 {
		t.Fatalf("exit %d %s", code, stderr)
	}
	var traces, short, dups int
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if _, err := fmt.Sscanf(lines[len(lines)-1], "%d,%d,%d", &traces, &short, &dups); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	if short != 0 || dups != 0 {
		t.Errorf("%d traces miss rows, %d kernels twice", short, dups)
	}
	return traces
}
