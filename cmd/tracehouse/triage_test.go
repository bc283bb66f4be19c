package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

const demoDir = "../../testdata/demo"

// TestTriageEndToEnd runs the triage subtests on the demo, ingested once
// per test binary through `triage PATH` itself (demoTemplate). Each subtest
// gets its own copy of that warehouse, so they run in parallel.
func TestTriageEndToEnd(t *testing.T) {
	t.Parallel()
	demoTemplate(t)
	for _, c := range []struct {
		name string
		test func(*testing.T, string)
	}{
		{"Ingest", testTriageIngest},
		{"EveryFormat", testTriageDemoEveryFormat},
		{"MarkdownEscapes", testTriageMarkdownEscapes},
		{"Deterministic", testTriageDeterministic},
		{"CSVOut", testTriageCSVOut},
		{"EmptyKernelTable", testTriageEmptyKernelTable},
		{"RankAll", testTriageRankAll},
		{"TwoTrace", testTriageTwoTrace},
		{"LatestRun", testTriageLatestRun},
		{"Errors", testTriageErrors},
		{"JSONContract", testTriageJSONContract},
		{"Timelines", testTriageTimelines},
		{"UserCatalog", testTriageUserCatalog},
		{"SavedOverlap", testTriageSavedOverlap},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, demoCopy(t))
		})
	}
}

// runTriage runs `tracehouse --db db triage args...` in-process.
func runTriage(db string, args ...string) (int, string, string) {
	io, out, errOut := testIO("")
	code := run(append([]string{"--db", db, "triage"}, args...), io, testEnv)
	return code, out.String(), errOut.String()
}

// decodeReports reads the stream of report objects `--format json` writes
// (one per run).
func decodeReports[T any](t *testing.T, s string) []T {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	var out []T
	for {
		var v T
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("decode report %d: %v", len(out), err)
		}
		out = append(out, v)
	}
}

var demoLabels = []string{"sglang-formal", "sglang-llama", "sglang-mapping", "tokenspeed-deepseek", "trtllm-llama", "vllm-qwen-moe"}

// testTriageIngest: `triage testdata/demo` ingested every file and printed
// the report of every run, the bytes of the golden file the other formats
// of EveryFormat sit beside.
func testTriageIngest(t *testing.T, db string) {
	if !strings.Contains(demoIngest.errOut, "ingested 16 file(s)") {
		t.Errorf("stderr: %q", demoIngest.errOut)
	}
	golden(t, "triage-demo.json", demoIngest.out)
}

// demoReports are the reports of `triage testdata/demo`, built once (by the
// command's own steps, on a copy of the demo warehouse) for the subtests
// that render them; stderr is what resolving the path printed.
var demoReports struct {
	once   sync.Once
	ok     bool
	reps   []*report.TriageReport
	stderr string
}

func triageDemoReports(t *testing.T) ([]*report.TriageReport, string) {
	t.Helper()
	demoReports.once.Do(func() {
		demoReports.reps, demoReports.stderr = triageReports(t, demoCopy(t), demoDir)
		demoReports.ok = true
	})
	if !demoReports.ok {
		t.Fatal("building the demo's reports failed (see the first failure)")
	}
	return demoReports.reps, demoReports.stderr
}

// testTriageDemoEveryFormat: `triage testdata/demo` in every format, one
// report per run in label order, the files found already ingested; each
// format is its golden file (text is table's), all rendered from the same
// reports, computed once.
func testTriageDemoEveryFormat(t *testing.T, db string) {
	reps, stderr := triageDemoReports(t)
	if !strings.Contains(stderr, "already ingested") {
		t.Errorf("stderr does not say the files were already ingested: %q", stderr)
	}
	for _, format := range []string{"table", "text", "markdown", "json", "csv"} {
		out, csvDir := renderTriage(t, reps, format, demoDir)
		switch format {
		case "csv":
			golden(t, "triage-demo.csv.txtar", csvArchive(t, csvDir))
			continue
		case "text":
			golden(t, "triage-demo.table", out)
		default:
			golden(t, "triage-demo."+format, out)
		}
		if format == "json" {
			reps := decodeReports[report.TriageReport](t, out)
			var labels []string
			for _, r := range reps {
				labels = append(labels, r.Run)
			}
			if !slices.Equal(labels, demoLabels) {
				t.Errorf("json reports %v, want %v", labels, demoLabels)
			}
			continue
		}
		last := -1
		for _, l := range demoLabels {
			i := strings.Index(out, "Run: "+l+" ")
			if i < 0 || i < last {
				t.Errorf("%s: report of %s missing or out of order", format, l)
			}
			last = i
		}
		for _, want := range []string{"Mode: single-trace", "Framework: SGLang (evidence: ", "Families: gemm",
			"Python loc", "Overlap opportunities", "Fuse patterns", "Attribution: ", // the header is cut to fit 120 columns
			"Stage extend/prefill: summed kernel time "} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q", format, want)
			}
		}
	}
}

// testTriageMarkdownEscapes: pipes and angle brackets in kernel names stay
// inside their cells.
func testTriageMarkdownEscapes(t *testing.T, db string) {
	code, out, stderr := runTriage(db, "sglang-llama", "--format", "markdown", "--stage", "decode")
	if code != 0 {
		t.Fatal(stderr)
	}
	if !strings.Contains(out, `| void flashinfer::norm::FusedAddRMSNormKernel\<8u, __nv_bfloat16> |`) {
		t.Errorf("markdown kernel cell not escaped:\n%s", out)
	}
	// Every row of every table has as many cell separators as its header.
	pipes := func(l string) int { return strings.Count(strings.ReplaceAll(l, `\|`, ""), "|") }
	want := -1
	for _, l := range strings.Split(out, "\n") {
		switch {
		case !strings.HasPrefix(l, "|"):
			want = -1
		case want < 0:
			want = pipes(l)
		case pipes(l) != want:
			t.Errorf("row with %d separators, header has %d: %q", pipes(l), want, l)
		}
	}
}

// demoMemo holds the output of command lines that only read the demo and
// that several tests check, run once each (demoOnce).
var demoMemo sync.Map // args joined by NUL -> *memoRun

type memoRun struct {
	once        sync.Once
	code        int
	out, errOut string
}

// demoOnce runs `tracehouse --db DEMO ARGS` with testEnv (COLUMNS unset)
// once per test binary, DEMO a copy of the demo warehouse for that command
// line alone, and gives every caller with the same ARGS its exit status
// and output. Only for command lines that read the warehouse and print
// nothing of its path: tests that hold the same output to a golden file,
// to a lake's, or to a width share one run of it.
func demoOnce(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	v, _ := demoMemo.LoadOrStore(strings.Join(args, "\x00"), &memoRun{})
	m := v.(*memoRun)
	m.once.Do(func() {
		io, out, errOut := testIO("")
		m.code = run(append([]string{"--db", demoCopy(t)}, args...), io, testEnv)
		m.out, m.errOut = out.String(), errOut.String()
	})
	return m.code, m.out, m.errOut
}

// triageOnce is demoOnce of `triage ARGS`.
func triageOnce(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return demoOnce(t, append([]string{"triage"}, args...)...)
}

// demoAllRanksArgs is a triage command line whose reports (every run of
// the demo, every rank, every kernel row) testTriageJSONContract prints as
// JSON and TestTriageFitsTheTerminal as tables: demoAllRanks builds them
// once.
var demoAllRanksArgs = []string{demoDir, "--rank", "all", "--min-share", "0"}

var demoAllRanksReports sharedReports

// demoAllRanks builds the reports of demoAllRanksArgs once.
func demoAllRanks(t *testing.T) []*report.TriageReport {
	t.Helper()
	return demoAllRanksReports.get(t, "the demo's reports of every rank", demoAllRanksArgs)
}

// sharedReports are the reports of one triage command line, built once
// per test binary by the command's own steps on a copy of the demo
// warehouse, for the tests that print them.
type sharedReports struct {
	once sync.Once
	ok   bool
	reps []*report.TriageReport
}

// get builds the reports of args the first time (what names them in the
// failure of a later call when that build failed).
func (s *sharedReports) get(t *testing.T, what string, args []string) []*report.TriageReport {
	t.Helper()
	s.once.Do(func() {
		s.reps, _ = triageReports(t, demoCopy(t), args...)
		s.ok = true
	})
	if !s.ok {
		t.Fatalf("building %s failed (see the first failure)", what)
	}
	return s.reps
}

// llamaRankAllArgs is a triage command line whose reports (sglang-llama's,
// every rank) testTriageDeterministic prints as a table (its golden file)
// and testTriageRankAll as JSON: llamaRankAll builds them once.
var llamaRankAllArgs = []string{"sglang-llama", "--rank", "all"}

var llamaRankAllReports sharedReports

// llamaRankAll builds the reports of llamaRankAllArgs once.
func llamaRankAll(t *testing.T) []*report.TriageReport {
	t.Helper()
	return llamaRankAllReports.get(t, "sglang-llama's reports of every rank", llamaRankAllArgs)
}

// demoTwoTraceArgs is the two-trace triage of the demo's runs whose
// reports testTriageTwoTrace and the triage-two-trace width goldens print
// as text: demoTwoTrace builds them once.
var demoTwoTraceArgs = []string{"--mapping", "sglang-mapping", "--formal", "sglang-formal"}

var demoTwoTraceReports sharedReports

// demoTwoTrace builds the reports of demoTwoTraceArgs once.
func demoTwoTrace(t *testing.T) []*report.TriageReport {
	t.Helper()
	return demoTwoTraceReports.get(t, "the demo's two-trace reports", demoTwoTraceArgs)
}

// testTriageDeterministic: the same warehouse gives byte-identical output:
// each command's output is its golden file's, written by another process
// from another ingest. (sglang-llama --rank all's, as the command's print
// step prints the reports llamaRankAll built.)
func testTriageDeterministic(t *testing.T, db string) {
	if out := printTriage(t, llamaRankAll(t), "table", "", -1, llamaRankAllArgs...); out == "" {
		t.Error("sglang-llama --rank all: no output")
	} else {
		golden(t, "triage-sglang-llama-rank-all.table", out)
	}
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"triage-vllm-qwen-moe.markdown", []string{"vllm-qwen-moe", "--format", "markdown"}},
		{"triage-tokenspeed-deepseek-min-share-0.json", []string{"tokenspeed-deepseek", "--format", "json", "--min-share", "0"}},
		{"triage-two-trace.json", []string{"--mapping", "sglang-mapping", "--formal", "sglang-formal", "--format", "json"}},
	} {
		code, out, stderr := triageOnce(t, c.args...)
		if code != 0 || out == "" {
			t.Errorf("%v: exit %d, %d bytes: %s", c.args, code, len(out), stderr)
			continue
		}
		golden(t, c.golden, out)
	}
}

// testTriageCSVOut: --format csv --out DIR writes one file per table:
// traces, GPU events and stage totals per run, then families, kernels,
// overlap and fusions per stage. The demo's files are those of EveryFormat,
// rendered from the reports built once; the command writes one run's, which
// are the same files.
func testTriageCSVOut(t *testing.T, db string) {
	reps, _ := triageDemoReports(t)
	out, dir := renderTriage(t, reps, "csv", demoDir)
	if out != "" {
		t.Fatalf("stdout %q", out)
	}
	js := demoIngest.out
	var want []string
	for _, r := range decodeReports[report.TriageReport](t, js) {
		want = append(want, r.Run+".traces.csv", r.Run+".gpu_events.csv", r.Run+".stages.csv")
		for _, st := range r.Stages {
			for _, tb := range []string{"families", "kernels", "overlap", "fusions"} {
				want = append(want, r.Run+"."+st.Stage+"."+tb+".csv")
			}
			if st.Idle != nil {
				want = append(want, r.Run+"."+st.Stage+".idle.csv", r.Run+"."+st.Stage+".idle_gaps.csv")
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("files:\n got  %v\n want %v", got, want)
	}
	// Every file parses, with a header, and the kernels' times are exact ns.
	f, err := os.ReadFile(filepath.Join(dir, "sglang-llama.decode.kernels.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(f)).ReadAll()
	if err != nil || len(recs) < 2 || recs[0][0] != "kernel" || recs[0][3] != "gpu_time_ns" {
		t.Fatalf("kernels csv: %v %v", recs, err)
	}
	if strings.ContainsAny(recs[1][3], ". ") {
		t.Errorf("gpu_time_ns %q is not an integer", recs[1][3])
	}
	// The command: stdout empty, a line on stderr, the same files.
	one := t.TempDir()
	code, out, stderr := runTriage(db, "sglang-llama", "--format", "csv", "--out", one)
	if code != 0 || out != "" || !strings.Contains(stderr, "CSV file(s) to "+one) {
		t.Fatalf("exit %d, stdout %q: %s", code, out, stderr)
	}
	entries, err = os.ReadDir(one)
	if err != nil || len(entries) == 0 {
		t.Fatalf("%d files, %v", len(entries), err)
	}
	for _, e := range entries {
		a, err1 := os.ReadFile(filepath.Join(one, e.Name()))
		b, err2 := os.ReadFile(filepath.Join(dir, e.Name()))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) || !strings.HasPrefix(e.Name(), "sglang-llama.") {
			t.Errorf("%s: the command's file differs from the demo's (%v %v)", e.Name(), err1, err2)
		}
	}
}

// testTriageEmptyKernelTable: when no kernel reaches --min-share, the
// table prints one row saying so and JSON lists none (no fake rows).
func testTriageEmptyKernelTable(t *testing.T, db string) {
	_, all, _ := runTriage(db, "sglang-llama", "--min-share", "0", "--stage", "decode", "--format", "json")
	names := len(decodeReports[report.TriageReport](t, all)[0].Stages[0].Kernels)
	// --min-share 99's report, built once by the command's steps and
	// printed as text and JSON by its print step
	printAs := builtReport(t, db, "triage", "sglang-llama", "--min-share", "99", "--stage", "decode")
	out := printAs("table", "", -1)
	msg := fmt.Sprintf("(no kernel reached 99%% of summed kernel time; %d hidden, --min-share 0 shows all)", names)
	if names < 10 || !strings.Contains(out, msg) {
		t.Errorf("no empty-table row %q:\n%s", msg, out)
	}
	r := decodeReports[report.TriageReport](t, printAs("json", "", -1))[0]
	if len(r.Stages) != 1 || len(r.Stages[0].Kernels) != 0 || r.Stages[0].KernelsHidden != int64(names) ||
		r.Stages[0].HiddenTimeNS != r.Stages[0].Totals.KernelTimeNS {
		t.Errorf("json: %+v", r.Stages)
	}
}

// testTriageRankAll: --rank all sums ranks, adds the spread column and
// reports rank null.
func testTriageRankAll(t *testing.T, db string) {
	js := printTriage(t, llamaRankAll(t), "json", "", -1, llamaRankAllArgs...)
	reps := decodeReports[report.TriageReport](t, js)
	if len(reps) != 1 {
		t.Fatalf("%d reports", len(reps))
	}
	r := reps[0]
	if r.Rank != nil || len(r.Stages) != 2 {
		t.Fatalf("rank %v, %d stages", r.Rank, len(r.Stages))
	}
	for _, st := range r.Stages {
		for _, k := range st.Kernels {
			s := k.RankSpread
			if s == nil || s.Ranks != 2 || s.MinUS > s.MedianUS || s.MedianUS > s.MaxUS ||
				s.MinUS+s.MaxUS-k.GPUTimeUS > 1e-6 || s.MinUS+s.MaxUS-k.GPUTimeUS < -1e-6 {
				t.Errorf("%s %s: spread %+v of %v us", st.Stage, k.Kernel, s, k.GPUTimeUS)
			}
		}
	}
	// the same reports in text, as `triage sglang-llama --rank all` prints
	// them (the table golden testTriageDeterministic holds them to)
	out := printTriage(t, llamaRankAll(t), "table", "", -1, llamaRankAllArgs...)
	if !strings.Contains(out, "Rank spread") || !strings.Contains(out, "extend/prefill (all ranks)") {
		t.Errorf("text lacks the rank-spread column:\n%s", out)
	}
}

// testTriageTwoTrace: sites come from the mapping run, timing from the
// formal one; the decode stage of the formal run (CUDA graphs) has almost
// no sites of its own.
func testTriageTwoTrace(t *testing.T, db string) {
	_, single, _ := runTriage(db, "sglang-formal", "--format", "json", "--min-share", "0")
	_, two := twoTraceFresh(t)
	s := decodeReports[report.TriageReport](t, single)[0]
	m := decodeReports[report.TriageReport](t, two)[0]
	if m.Mode != report.ModeMapping || m.MappingRun == nil || *m.MappingRun != "sglang-mapping" || m.Run != "sglang-formal" {
		t.Fatalf("header: mode %s run %s mapping %v", m.Mode, m.Run, m.MappingRun)
	}
	for i, st := range m.Stages {
		ss := s.Stages[i]
		if st.Totals != ss.Totals {
			t.Errorf("%s: two-trace totals %+v differ from the formal run's %+v", st.Stage, st.Totals, ss.Totals)
		}
		for j, k := range st.Kernels {
			if k.GPUTimeNS != ss.Kernels[j].GPUTimeNS || k.Launches != ss.Kernels[j].Launches {
				t.Errorf("%s %s: timing not the formal run's", st.Stage, k.Kernel)
			}
			if k.Match != "exact" && k.Match != "base" && k.Match != "unmapped" {
				t.Errorf("%s %s: match %q", st.Stage, k.Kernel, k.Match)
			}
		}
	}
	dec := m.Stages[1]
	if dec.Stage != "decode" || dec.Coverage.CoveragePct < 99 || s.Stages[1].Coverage.CoveragePct > 20 {
		t.Errorf("decode coverage: mapped %.1f%%, own %.1f%%", dec.Coverage.CoveragePct, s.Stages[1].Coverage.CoveragePct)
	}
	// the demo's two-trace report as `triage --mapping sglang-mapping
	// --formal sglang-formal` prints it (demoTwoTrace: built once, held to
	// width goldens too)
	text := printTriage(t, demoTwoTrace(t), "table", "", -1, demoTwoTraceArgs...)
	if !strings.Contains(text, "Mode: mapping-formal") || !strings.Contains(text, "Mapping coverage: ") {
		t.Errorf("two-trace header:\n%s", text)
	}
}

// twoTraceArgs is a two-trace triage of the demo's paths.
var twoTraceArgs = []string{"--mapping", demoDir + "/sglang-mapping", "--formal", demoDir + "/sglang-formal",
	"--format", "json", "--min-share", "0"}

// twoTraceOut is what `triage` twoTraceArgs printed into twoTraceFresh's
// warehouse.
var twoTraceOut string

// twoTraceFresh is the warehouse `triage` twoTraceArgs ingested the two
// runs into, fresh, built once per test binary (read it only), and the
// report it printed: testTriageTwoTrace checks the report, and
// testTriageSavedOverlap what the ingest saved.
func twoTraceFresh(t *testing.T) (db, stdout string) {
	t.Helper()
	db = schematest.TemplateFile(t, "two-trace", func(path string) error {
		code, out, stderr := runTriage(path, twoTraceArgs...)
		if code != 0 {
			return fmt.Errorf("triage %v: exit %d: %s", twoTraceArgs, code, stderr)
		}
		twoTraceOut = out
		return nil
	})
	return db, twoTraceOut
}

// testTriageLatestRun: no argument reports the most recently ingested run.
func testTriageLatestRun(t *testing.T, db string) {
	code, js, stderr := runTriage(db, "--format", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	io, out, _ := testIO("")
	run([]string{"--db", db, "runs", "--format", "json"}, io, testEnv)
	var runs []runJSON
	if err := json.Unmarshal(out.Bytes(), &runs); err != nil {
		t.Fatal(err)
	}
	reps := decodeReports[report.TriageReport](t, js)
	if len(reps) != 1 || reps[0].Run != runs[0].Label {
		t.Errorf("got %d reports, first %v; newest run is %s", len(reps), reps, runs[0].Label)
	}
}

// TestTriageThrowAway: --db :memory: ingests a single file and reports it.
func TestTriageThrowAway(t *testing.T) {
	t.Parallel()
	code, out, stderr := runTriage(":memory:", demoDir+"/trtllm-llama/trace.json", "--format", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	r := decodeReports[report.TriageReport](t, out)
	if len(r) != 1 || r[0].Run != "trtllm-llama" || r[0].Framework != "TensorRT-LLM" || len(r[0].Stages) != 1 ||
		r[0].Stages[0].Stage != "unknown" {
		t.Errorf("%+v", r)
	}
}

// TestThrowAwayEqualsKept: an in-memory warehouse saves no aggregate (its
// reports compute them), a warehouse file does (its reports read the saved
// copies); both print the same reports of the same paths (the same ids):
// every rank's triage, and a compare. The file is one warehouse: the
// triage ingests sglang-llama into it, the compare sglang-formal (with
// sglang-llama already there), as each command into a fresh in-memory
// warehouse ingests them, in that order.
func TestThrowAwayEqualsKept(t *testing.T) {
	t.Parallel()
	llama, formal := demoDir+"/sglang-llama", demoDir+"/sglang-formal"
	kept := filepath.Join(t.TempDir(), "w.duckdb")
	for _, args := range [][]string{
		{"triage", "--rank", "all", "--format", "json", llama},
		{"compare", "--format", "json", llama, formal},
	} {
		code, want, stderr := runCmd(t, append([]string{"--db", kept}, args...)...)
		if code != 0 {
			t.Fatalf("%v into a file: exit %d: %s", args, code, stderr)
		}
		code, got, stderr := runCmd(t, append([]string{"--db", ":memory:"}, args...)...)
		if code != 0 || got != want {
			t.Errorf("%v in memory: exit %d %s; output equal to the file's: %v\n%s", args, code, stderr, got == want, firstDiff(got, want))
		}
	}
}

// TestTriagePartialIngest: a damaged file is reported and exits 1, but the
// report of what landed is still printed.
func TestTriagePartialIngest(t *testing.T) {
	t.Parallel()
	code, out, stderr := runTriage(":memory:", demoDir+"/trtllm-llama", "../../testdata/bad/truncated.trace.json")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(stderr, "truncated.trace.json") || !strings.Contains(out, "Run: trtllm-llama") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, stderr)
	}
}

// testTriageErrors: usage mistakes exit 2, a missing run 1.
func testTriageErrors(t *testing.T, db string) {
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--mapping", "sglang-mapping"}, 2, "--mapping and --formal go together"},
		{[]string{"--formal", "sglang-formal"}, 2, "--mapping and --formal go together"},
		{[]string{"--mapping", "a", "--formal", "b", "sglang-llama"}, 2, "two-trace mode takes no"},
		{[]string{"--stage", "warmup"}, 2, "--stage"},
		{[]string{"--rank", "-1"}, 2, "--rank"},
		{[]string{"--rank", "first"}, 2, "--rank"},
		{[]string{"--min-share", "101"}, 2, "--min-share"},
		{[]string{"--min-share", "lots"}, 2, "min-share"},
		{[]string{"--timeline", "-2"}, 2, "--timeline"},
		{[]string{"--overlap-rows", "-1"}, 2, "--overlap-rows"},
		{[]string{"--framework", "tgi"}, 2, "--framework"},
		{[]string{"--format", "csv"}, 2, "--out DIR"},
		{[]string{"--out", "x"}, 2, "--format csv"},
		{[]string{"--format", "yaml"}, 2, "unknown format"},
		{[]string{"--no-such-flag"}, 2, "unknown flag"},
		{[]string{"--mapping", demoDir, "--formal", "sglang-formal"}, 2, "holds 6 runs"},
		{[]string{"--mapping", "sglang-formal", "--formal", "sglang-formal"}, 2, "same run"},
		{[]string{"no-such-run"}, 1, "neither a file, a directory nor a run"},
		{[]string{"sglang-llama", "--rank", "5"}, 1, "no GPU events on rank 5"},
	} {
		code, _, stderr := runTriage(db, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.msg)
		}
	}
}

// TestTriageOptions captures the parsed options (cli/cli style).
func TestTriageOptions(t *testing.T) {
	t.Parallel()
	io, _, _ := testIO("")
	f := &Factory{IO: io, Getenv: testEnv}
	var got *TriageOptions
	cmd := newCmdTriage(f, func(o *TriageOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"a", "dir/", "--stage", "extend", "--rank", "all", "--min-share", "0.5",
		"--framework", "VLLM", "--timeline", "3", "--overlap-rows", "0", "--catalog", "c.yaml"})
	cmd.SetOut(io.Out)
	cmd.SetErr(io.ErrOut)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := TriageOptions{Targets: []string{"a", "dir/"}, Sections: Sections{Stage: "prefill", RankAll: true, RankSet: true,
		MinShare: 0.5, OverlapRows: 0}, Framework: "vllm", Timeline: 3, Catalog: "c.yaml"}
	if got == nil || !equalOptions(*got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	cmd = newCmdTriage(f, func(o *TriageOptions) error { got = o; return nil })
	cmd.SetArgs([]string{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want = TriageOptions{Sections: defaultSections(), Framework: "auto"}
	if !equalOptions(*got, want) {
		t.Errorf("defaults: got %+v\nwant %+v", got, want)
	}
}

func equalOptions(a, b TriageOptions) bool {
	return slices.Equal(a.Targets, b.Targets) && a.Mapping == b.Mapping && a.Formal == b.Formal &&
		a.Stage == b.Stage && a.Rank == b.Rank && a.RankAll == b.RankAll && a.RankSet == b.RankSet &&
		a.MinShare == b.MinShare && a.Framework == b.Framework && a.Timeline == b.Timeline &&
		a.OverlapRows == b.OverlapRows && a.Catalog == b.Catalog && a.Out == b.Out
}

// The JSON contract of issue 3, as a checker: every listed key must be
// present with its type at every level (other keys are allowed).
type jsonCheck func(v any) string

func jsonObj(fields map[string]jsonCheck) jsonCheck {
	return func(v any) string {
		m, ok := v.(map[string]any)
		if !ok {
			return "not an object"
		}
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			x, ok := m[k]
			if !ok {
				return "missing " + k
			}
			if msg := fields[k](x); msg != "" {
				return k + ": " + msg
			}
		}
		return ""
	}
}

func jsonArr(elem jsonCheck) jsonCheck {
	return func(v any) string {
		a, ok := v.([]any)
		if !ok {
			return "not an array"
		}
		for i, e := range a {
			if msg := elem(e); msg != "" {
				return fmt.Sprintf("[%d].%s", i, msg)
			}
		}
		return ""
	}
}

func jsonStr(v any) string {
	if _, ok := v.(string); !ok {
		return fmt.Sprintf("%v is not a string", v)
	}
	return ""
}

func jsonNum(v any) string {
	if _, ok := v.(float64); !ok {
		return fmt.Sprintf("%v is not a number", v)
	}
	return ""
}

func jsonOrNull(c jsonCheck) jsonCheck {
	return func(v any) string {
		if v == nil {
			return ""
		}
		return c(v)
	}
}

func jsonAny(any) string { return "" }

var triageContract = jsonObj(map[string]jsonCheck{
	"mode": jsonStr, "framework": jsonStr, "run": jsonStr, "model": jsonStr,
	"stages": jsonArr(jsonObj(map[string]jsonCheck{
		"stage": jsonStr,
		"rank":  jsonOrNull(jsonNum),
		"totals": jsonObj(map[string]jsonCheck{
			"kernel_time_us": jsonNum, "busy_time_us": jsonNum, "window_us": jsonNum, "streams": jsonNum,
		}),
		"kernels": jsonArr(jsonObj(map[string]jsonCheck{
			"kernel": jsonStr, "family": jsonStr, "category": jsonStr, "gpu_time_us": jsonNum,
			"share_pct": jsonNum, "launches": jsonNum, "avg_us": jsonNum,
			"sites": jsonArr(jsonObj(map[string]jsonCheck{
				"location": jsonStr, "site_share_pct": jsonNum, "cpu_op": jsonOrNull(jsonStr),
			})),
		})),
		"overlap": jsonArr(jsonObj(map[string]jsonCheck{
			"priority": jsonStr, "verdict": jsonStr, "kernel": jsonStr, "scope": jsonStr,
			"total_us": jsonNum, "busy_share_pct": jsonNum, "exclusive_pct": jsonNum, "hidden_pct": jsonNum,
			"dominant": jsonOrNull(jsonStr), "dep_risk": jsonStr, "recommendation": jsonStr,
		})),
		"fusions": jsonArr(jsonAny),
	})),
})

// testTriageJSONContract validates every demo report, for one rank (what
// `triage testdata/demo --format json` printed as it ingested the demo)
// and for all ranks with every kernel row (--min-share 0), and in
// two-trace mode, against the contract, and makes sure the check saw
// sites, CPU ops and overlap rows.
func testTriageJSONContract(t *testing.T, db string) {
	var sites, ops, overlap int
	for _, args := range [][]string{
		nil,              // demoIngest's
		demoAllRanksArgs, // printed from demoAllRanks
		{"--mapping", "sglang-mapping", "--formal", "sglang-formal", "--format", "json"},
	} {
		code, out, stderr := demoIngest.code, demoIngest.out, demoIngest.errOut
		switch {
		case slices.Equal(args, demoAllRanksArgs):
			code, out, stderr = 0, printTriage(t, demoAllRanks(t), "json", "", -1, args...), ""
		case args != nil:
			code, out, stderr = triageOnce(t, args...)
		}
		if code != 0 {
			t.Fatalf("%v: %s", args, stderr)
		}
		for i, rep := range decodeReports[map[string]any](t, out) {
			if msg := triageContract(rep); msg != "" {
				t.Errorf("%v report %d: %s", args, i, msg)
			}
			for _, st := range rep["stages"].([]any) {
				st := st.(map[string]any)
				overlap += len(st["overlap"].([]any))
				for _, k := range st["kernels"].([]any) {
					for _, s := range k.(map[string]any)["sites"].([]any) {
						sites++
						if s.(map[string]any)["cpu_op"] != nil {
							ops++
						}
					}
				}
			}
		}
	}
	if sites == 0 || ops == 0 || overlap == 0 {
		t.Errorf("the contract check saw %d sites, %d CPU ops, %d overlap rows", sites, ops, overlap)
	}
}

// TestTriageContractChecker: the checker itself rejects a missing key, a
// wrong type and a non-array list.
func TestTriageContractChecker(t *testing.T) {
	t.Parallel()
	valid := `{"mode":"single-trace","framework":"SGLang","run":"r","model":"m","stages":[{"stage":"decode","rank":0,
		"totals":{"kernel_time_us":1,"busy_time_us":1,"window_us":1,"streams":1},
		"kernels":[{"kernel":"k","family":"gemm","category":"compute","gpu_time_us":1,"share_pct":100,"launches":1,"avg_us":1,
			"sites":[{"location":"a.py:1 f","site_share_pct":100,"cpu_op":null}]}],
		"overlap":[{"priority":"P1","verdict":"headroom","kernel":"k","scope":"s","total_us":1,"busy_share_pct":1,
			"exclusive_pct":1,"hidden_pct":0,"dominant":null,"dep_risk":"low","recommendation":"try fusion"}],
		"fusions":[]}]}`
	check := func(s string) string {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return triageContract(v)
	}
	if msg := check(valid); msg != "" {
		t.Fatalf("valid document rejected: %s", msg)
	}
	for _, bad := range []struct{ from, to, want string }{
		{`"share_pct":100,`, ``, "missing share_pct"},
		{`"launches":1`, `"launches":"1"`, "launches: 1 is not a number"},
		{`"cpu_op":null`, `"cpu_op":3`, "cpu_op"},
		{`"fusions":[]`, `"fusions":{}`, "fusions: not an array"},
		{`"streams":1`, `"streamz":1`, "missing streams"},
		{`"mode":"single-trace",`, ``, "missing mode"},
	} {
		if msg := check(strings.Replace(valid, bad.from, bad.to, 1)); !strings.Contains(msg, bad.want) {
			t.Errorf("%s -> %s: checker says %q, want %q", bad.from, bad.to, msg, bad.want)
		}
	}
}

// testTriageTimelines: --timeline N draws N windows per stage, in text and
// (fenced) in markdown.
func testTriageTimelines(t *testing.T, db string) {
	code, out, stderr := runTriage(db, "sglang-llama", "--timeline", "2", "--stage", "prefill")
	if code != 0 {
		t.Fatal(stderr)
	}
	if strings.Count(out, "<- longest instance") != 2 || !strings.Contains(out, "\nTimelines\n") ||
		!strings.Contains(out, "stream 22 |") {
		t.Errorf("timelines:\n%s", out)
	}
	_, md, _ := runTriage(db, "sglang-llama", "--timeline", "1", "--format", "markdown")
	if strings.Count(md, "<- longest instance") != 2 || !strings.Contains(md, "### Timelines") || !strings.Contains(md, "```") {
		t.Errorf("markdown timelines:\n%s", md)
	}
	// without --timeline: sglang-llama's report of `triage testdata/demo`
	// (triageDemoReports), as TestTriageFitsTheTerminal prints it
	reps, _ := triageDemoReports(t)
	plain := ""
	for _, rep := range reps {
		if rep.Run == "sglang-llama" {
			plain = printTriage(t, []*report.TriageReport{rep}, "table", "", -1, rep.Run)
		}
	}
	if plain == "" || strings.Contains(plain, "Timelines") {
		t.Error("timelines drawn without --timeline")
	}
}

// testTriageUserCatalog: --catalog FILE replaces the built-in catalog for
// the fuse-pattern table (the warehouse is reopened for writing to install
// it), the next plain triage reinstalls the built-in one, and a broken file
// is an error naming it.
func testTriageUserCatalog(t *testing.T, db string) {
	dir := t.TempDir()
	user := filepath.Join(dir, "mine.yaml")
	err := os.WriteFile(user, []byte(`version: 1
fusions:
  - id: my-act
    name: My activation pattern
    framework: sglang
    origin: mainline
    fused: [act_and_mul]
    min_share: 0.1
    likely_share: 1.0
    sources: [python/sglang/srt/layers/activation.py]
    rationale: A test entry.
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	patterns := func(args ...string) []string {
		t.Helper()
		code, out, stderr := runTriage(db, append([]string{"sglang-llama", "--stage", "prefill", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var names []string
		for _, f := range decodeReports[report.TriageReport](t, out)[0].Stages[0].Fusions {
			names = append(names, f.Pattern)
		}
		return names
	}
	if got := patterns("--catalog", user); !slices.Equal(got, []string{"My activation pattern"}) {
		t.Errorf("with --catalog: %v", got)
	}
	if got := patterns(); slices.Contains(got, "My activation pattern") || len(got) == 0 {
		t.Errorf("built-in catalog not reinstalled: %v", got)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("version: 1\nfusions:\n  - id: Not A Slug\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runTriage(db, "sglang-llama", "--catalog", bad); code != 1 || !strings.Contains(stderr, "bad.yaml") {
		t.Errorf("broken catalog: exit %d: %s", code, stderr)
	}
}

// testTriageSavedOverlap: `triage PATH` saved the overlap of every run it
// ingested, except a mapping run (whose overlap is never shown). That the
// saved copy gives the figures of the sweep is queries/overlap_store_test.go's.
func testTriageSavedOverlap(t *testing.T, db string) {
	io, out, errOut := testIO("")
	code := run([]string{"--db", db, "sql", "--format", "csv",
		"SELECT r.label FROM kernel_overlap_runs o JOIN runs r USING (run_id) ORDER BY 1"}, io, testEnv)
	if code != 0 {
		t.Fatal(errOut.String())
	}
	want := "label\nsglang-formal\nsglang-llama\nsglang-mapping\ntokenspeed-deepseek\ntrtllm-llama\nvllm-qwen-moe\n"
	if out.String() != want {
		t.Errorf("saved overlap for:\n%s\nwant\n%s", out.String(), want)
	}
	// A two-trace ingest into a fresh warehouse saves the formal run only.
	fresh, _ := twoTraceFresh(t)
	io, out, _ = testIO("")
	run([]string{"--db", fresh, "sql", "--format", "csv",
		"SELECT r.label FROM kernel_overlap_runs o JOIN runs r USING (run_id) ORDER BY 1"}, io, testEnv)
	if out.String() != "label\nsglang-formal\n" {
		t.Errorf("two-trace saved overlap for:\n%s", out.String())
	}
}
