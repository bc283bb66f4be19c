package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/synth"
)

// historyRuns are synthetic SGLang decode runs, in ingest order: h01..h06
// the same deployment with other noise seeds, tagged a=1 and b=1; then set
// a, where from h07a on every kernel is 20% slower (a lasting regression),
// and set b, where only h07b is (a one-run spike). Each set is ten runs of
// which the seventh got slower. (The synthetic eager decode steps are
// launch-bound: 20% slower kernels grow the busy time by 20% but the step
// window by about 3%, so the tests follow busy time, not step time.) The
// labels sort in this order, so one ingest of their parent directory gives
// the runs their ingest time in it (runs are finished in path order).
var historyRuns = func() []struct {
	label string
	slow  bool
	tags  []string
} {
	var out []struct {
		label string
		slow  bool
		tags  []string
	}
	add := func(label string, slow bool, tags ...string) {
		out = append(out, struct {
			label string
			slow  bool
			tags  []string
		}{label, slow, tags})
	}
	for i := 1; i <= 6; i++ {
		add(fmt.Sprintf("h%02d", i), false, "a=1", "b=1")
	}
	for i := 7; i <= 10; i++ {
		add(fmt.Sprintf("h%02da", i), true, "a=1")
		add(fmt.Sprintf("h%02db", i), i == 7, "b=1")
	}
	return out
}()

// TestHistoryEndToEnd: history over ten runs where the seventh got slower
// marks the seventh and no other, for a lasting shift and for a spike, by
// kernel, family and step metric; --by orders by a tag's value; formats and
// usage errors.
func TestHistoryEndToEnd(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	db := filepath.Join(t.TempDir(), "hist.duckdb")
	for i, r := range historyRuns {
		o := synth.Options{Framework: synth.SGLang, Dir: root, Run: r.label, Stage: synth.StageDecode, Steps: 8,
			Seed: int64(100 + i), Noise: 0.02, BatchSize: 32}
		if r.slow {
			o.Edits = []synth.Edit{{Factor: 1.2}}
		}
		if _, err := synth.Generate(o); err != nil {
			t.Fatal(err)
		}
	}
	// One ingest of every run (an ingest's fixed cost, its finish, paid
	// once), tagged with both keys; then each run keeps only its own tags.
	if code, _, errOut := runCmd(t, "--db", db, "ingest", "--tag", "a=1", "--tag", "b=1", root); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errOut)
	}
	w, err := schema.Open(context.Background(), db, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range historyRuns {
		var rm []string
		for _, k := range []string{"a", "b"} {
			if !slices.Contains(r.tags, k+"=1") {
				rm = append(rm, k)
			}
		}
		if len(rm) == 0 {
			continue
		}
		if _, err := ingest.TagRun(context.Background(), w.DB, r.label, nil, rm, false); err != nil {
			w.Close()
			t.Fatalf("tag %s: %v", r.label, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// history's default order is ingest order: the runs' order and tags
	// are historyRuns'.
	code, out, errOut := runCmd(t, "--db", db, "runs", "--format", "json")
	var stored []runJSON
	if err := json.Unmarshal([]byte(out), &stored); code != 0 || err != nil {
		t.Fatalf("runs: exit %d, %v: %s", code, err, errOut)
	}
	slices.Reverse(stored) // oldest first
	if len(stored) != len(historyRuns) {
		t.Fatalf("%d runs stored, want %d", len(stored), len(historyRuns))
	}
	for i, r := range historyRuns {
		if stored[i].Label != r.label || !slices.Equal(stored[i].Tags, r.tags) {
			t.Fatalf("run %d in ingest order: %s %q, want %s %q", i+1, stored[i].Label, stored[i].Tags, r.label, r.tags)
		}
	}
	for _, c := range []struct {
		name string
		test func(*testing.T, string)
	}{
		{"Goldens", testHistoryGoldens}, // first: ByTag tags the runs
		{"LastingShift", testHistoryLastingShift},
		{"Spike", testHistorySpike},
		{"ByTag", testHistoryByTag},
		{"Formats", testHistoryFormats},
		{"Usage", testHistoryUsage},
		{"EmptySelection", testHistoryEmptySelection},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, db) })
	}
}

func runHistory(db string, args ...string) (int, string, string) {
	io, out, errOut := testIO("")
	code := run(append([]string{"--db", db, "history"}, args...), io, testEnv)
	return code, out.String(), errOut.String()
}

func historyJSON(t *testing.T, db string, args ...string) (int, analysis.HistoryReport) {
	t.Helper()
	code, out, errOut := runHistory(db, append(args, "--format", "json")...)
	var r analysis.HistoryReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("exit %d, %v: %s\n%s", code, err, errOut, out)
	}
	return code, r
}

// decodeSeries is the one decode series of a history, checked to hold ten
// runs with 6 steps each (8 written, the edges left out).
func decodeSeries(t *testing.T, r analysis.HistoryReport) analysis.HistoryStage {
	t.Helper()
	if len(r.Stages) != 1 || r.Stages[0].Stage != "decode" {
		t.Fatalf("stages %+v, want decode only", r.Stages)
	}
	st := r.Stages[0]
	if len(st.Runs) != 10 {
		t.Fatalf("%d runs in the series, want 10", len(st.Runs))
	}
	for _, p := range st.Runs {
		if p.Steps != 6 || p.MedianNS == nil || p.LoNS == nil || *p.LoNS > *p.MedianNS || *p.HiNS < *p.MedianNS {
			t.Errorf("%s: %d steps, interval %v..%v around %v", p.Label, p.Steps, p.LoNS, p.HiNS, p.MedianNS)
		}
	}
	return st
}

// testHistoryLastingShift: the shift is marked once, at h07a, and (issue
// 33 item 9) the gate fails on the newest run, h10a, which is no change
// point but stays 20% above the level before h07a.
func testHistoryLastingShift(t *testing.T, db string) {
	for _, series := range [][]string{
		{"--kernel", attentionMatch},
		{"--family", "attention"},
		{"--metric", "busy"},
	} {
		code, r := historyJSON(t, db, append(series, "--tag", "a=1", "--fail-on-regression")...)
		st := decodeSeries(t, r)
		if code != exitRegression || !slices.Equal(st.ChangePoints, []string{"h07a"}) || st.FirstSlower == nil || *st.FirstSlower != "h07a" ||
			st.Gate == nil || !st.Gate.Regressed || st.Gate.Shift != "h07a" || len(st.Spikes) != 0 {
			t.Errorf("%q: exit %d, change points %q, first slower %v, gate %+v; want h07a only, exit 3", series, code, st.ChangePoints,
				st.FirstSlower, st.Gate)
			continue
		}
		if p := st.Runs[9]; p.Change != "" || *p.MedianNS < st.Gate.LevelNS*1.15 {
			t.Errorf("%q: newest run %+v, want no change point, still about 20%% above %v", series, p, st.Gate.LevelNS)
		}
		p := st.Runs[6]
		if p.Label != "h07a" || p.Change != analysis.ChangeSlower || p.DeltaPct == nil || *p.DeltaPct < 17 || *p.DeltaPct > 23 {
			t.Errorf("%q: seventh run %+v, want h07a about +20%%", series, p)
		}
		for i, p := range st.Runs {
			if (i < 3) != (p.ReferenceNS == nil) {
				t.Errorf("%q: run %d tested = %v; the first three are not", series, i+1, p.ReferenceNS != nil)
			}
		}
		if series[0] == "--kernel" {
			// One attention launch per layer per step in every run, so
			// launches per step are the same exact count everywhere.
			for _, p := range st.Runs {
				if p.LaunchesPerStep != st.Runs[0].LaunchesPerStep || p.LaunchesPerStep < 1 || p.SharePct == nil ||
					*p.SharePct <= 0 || *p.SharePct >= 100 {
					t.Errorf("%s: launches/step %v (first run %v), share %v", p.Label, p.LaunchesPerStep, st.Runs[0].LaunchesPerStep, p.SharePct)
				}
			}
		}
	}
}

func testHistorySpike(t *testing.T, db string) {
	for _, series := range [][]string{{"--kernel", attentionMatch}, {"--metric", "busy"}} {
		code, r := historyJSON(t, db, append(series, "--tag", "b=1", "--stage", "decode", "--fail-on-regression")...)
		st := decodeSeries(t, r)
		// issue 33 item 9: a one-run spike is reported apart, is not when
		// it got slow, and does not fail the runs after it.
		if code != 0 || !slices.Equal(st.ChangePoints, []string{"h07b"}) || !slices.Equal(st.Spikes, []string{"h07b"}) ||
			st.FirstSlower != nil || !st.Runs[6].Spike || st.Gate != nil {
			t.Errorf("%q: exit %d, change points %q, spikes %q, first slower %v, gate %+v; want the spike h07b apart, exit 0",
				series, code, st.ChangePoints, st.Spikes, st.FirstSlower, st.Gate)
		}
	}
	// Without a tag filter both sets interleave (h07a h07b h08a h08b ...,
	// slow and fast runs mixed after h06): when it got slow is still h07a.
	_, r := historyJSON(t, db, "--metric", "busy")
	if len(r.Stages) != 1 || r.Stages[0].FirstSlower == nil || *r.Stages[0].FirstSlower != "h07a" {
		t.Errorf("every run: first slower %v, want h07a", r.Stages)
	}
}

// testHistoryByTag orders set b by a version tag whose natural order puts
// the slow run last (0.4.10) and whose byte order would put it second.
func testHistoryByTag(t *testing.T, db string) {
	versions := map[string]string{"h07b": "0.4.10", "h08b": "0.4.7", "h09b": "0.4.8", "h10b": "0.4.9"}
	for i := 1; i <= 6; i++ {
		versions[fmt.Sprintf("h%02d", i)] = fmt.Sprintf("0.4.%d", i)
	}
	labels := make([]string, 0, len(versions))
	for l := range versions {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	// Tagged as `tracehouse tag LABEL version=V` does, in one session of
	// the warehouse rather than a command each.
	w, err := schema.Open(context.Background(), db, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range labels {
		if _, err := ingest.TagRun(context.Background(), w.DB, l, map[string]string{"version": versions[l]}, nil, false); err != nil {
			w.Close()
			t.Fatalf("tag %s: %v", l, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	code, r := historyJSON(t, db, "--kernel", attentionMatch, "--tag", "b=1", "--by", "version", "--fail-on-regression")
	st := decodeSeries(t, r)
	var order []string
	for _, p := range st.Runs {
		order = append(order, p.By)
	}
	want := []string{"0.4.1", "0.4.2", "0.4.3", "0.4.4", "0.4.5", "0.4.6", "0.4.7", "0.4.8", "0.4.9", "0.4.10"}
	if !slices.Equal(order, want) {
		t.Errorf("order by version %q, want %q", order, want)
	}
	if code != exitRegression || !slices.Equal(st.ChangePoints, []string{"h07b"}) || r.Newest != "h07b" {
		t.Errorf("exit %d, change points %q, newest %q; want exit 3 with h07b, the newest by version", code, st.ChangePoints, r.Newest)
	}
	// --last 4 keeps 0.4.7 .. 0.4.10: only one run can be tested.
	_, r = historyJSON(t, db, "--kernel", attentionMatch, "--tag", "b=1", "--by", "version", "--last", "4")
	if len(r.Stages) != 1 || len(r.Stages[0].Runs) != 4 || r.Stages[0].Runs[0].By != "0.4.7" {
		t.Errorf("--last 4: %+v", r.Stages)
	}
	// Runs of set a carry no version: left out, and said so.
	_, r = historyJSON(t, db, "--metric", "step_time", "--by", "version")
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "4 run(s) without tag version left out") {
		t.Errorf("notes %q", r.Notes)
	}
}

func testHistoryFormats(t *testing.T, db string) {
	code, out, errOut := runHistory(db, "--kernel", attentionMatch, "--tag", "a=1")
	if code != 0 || strings.Count(out, "▲ slower") != 1 || !strings.Contains(out, "first slower run (start of a lasting shift): h07a") ||
		!strings.Contains(out, "rule: a run is a change point") {
		t.Errorf("table: exit %d %s\n%s", code, errOut, out)
	}
	code, out, _ = runHistory(db, "--kernel", attentionMatch, "--tag", "a=1", "--format", "markdown")
	if code != 0 || !strings.Contains(out, "| # | Run |") || !strings.Contains(out, "## decode: 10 run(s)") {
		t.Errorf("markdown: exit %d\n%s", code, out)
	}
	code, out, _ = runHistory(db, "--kernel", attentionMatch, "--tag", "a=1", "--format", "csv")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 11 || !strings.HasPrefix(lines[0], "stage,order,run,") {
		t.Fatalf("csv: exit %d\n%s", code, out)
	}
	for _, l := range lines[1:] {
		if strings.HasSuffix(l, ",slower,false") != strings.Contains(l, ",h07a,") {
			t.Errorf("csv row %q", l)
		}
	}
	// JSON field names are a contract: read from the golden JSON of the
	// same series with its gate, which testHistoryGoldens holds the
	// command's output to.
	b, err := os.ReadFile(filepath.Join("testdata", "golden", "history-synth-shift.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]any) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	if got, want := keys(m), []string{"by", "keep_edges", "match", "newest", "notes", "rank", "rule", "series", "share_of",
		"stages", "tags", "what"}; !slices.Equal(got, want) {
		t.Errorf("JSON keys %q, want %q", got, want)
	}
	st := m["stages"].([]any)[0].(map[string]any)
	if got, want := keys(st), []string{"change_points", "first_slower", "gate", "missing", "runs", "spikes", "stage"}; !slices.Equal(got, want) {
		t.Errorf("stage keys %q, want %q", got, want)
	}
	p := st["runs"].([]any)[0].(map[string]any)
	if got, want := keys(p), []string{"absent", "by_value", "change", "ci_hi_ns", "ci_lo_ns", "delta_pct", "ingested_at", "label",
		"launches_per_step", "median_ns", "median_us", "noise_ns", "order", "reference_ns", "share_pct", "spike", "steps", "tags",
		"threshold_ns"}; !slices.Equal(got, want) {
		t.Errorf("run keys %q, want %q", got, want)
	}
}

func testHistoryUsage(t *testing.T, db string) {
	for _, args := range [][]string{
		{},
		{"--kernel", "x", "--metric", "busy"},
		{"--metric", "nope"},
		{"--kernel", "("},
		{"--metric", "busy", "--stage", "nope"},
		{"--metric", "busy", "--tag", "novalue"},
		{"--metric", "busy", "--window", "0"},
		{"--metric", "busy", "--last", "-1"},
		{"--metric", "busy", "extra"},
	} {
		if code, _, errOut := runHistory(db, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want 2: %s", args, code, errOut)
		}
	}
}

// testHistoryEmptySelection (issue 33 item 4): a selection that holds
// nothing is an error (exit 1, one line), gate or not; so in report.
func testHistoryEmptySelection(t *testing.T, db string) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--metric", "step_time", "--tag", "branch=mian", "--fail-on-regression"}, "carries branch=mian\n"},
		{[]string{"--metric", "step_time", "--rank", "7", "--fail-on-regression"},
			"tracehouse: no rank 7 in the selected runs (ranks: 0); see --rank\n"},
		{[]string{"--metric", "step_time", "--by", "nosuchtag", "--fail-on-regression"},
			"tracehouse: no selected run carries tag nosuchtag (--by)\n"},
		{[]string{"--family", "nosuch", "--fail-on-regression"}, "tracehouse: unknown family nosuch; families: activation, attention, "},
		{[]string{"--kernel", "no_such_kernel", "--tag", "a=1"},
			"tracehouse: no kernel matches \"no_such_kernel\" in the selected runs' steps on rank 0\n"},
		{[]string{"--family", "moe", "--tag", "a=1"}, "tracehouse: no kernel of family moe in the selected runs' steps on rank 0\n"},
		{[]string{"--metric", "busy", "--stage", "prefill"}, "tracehouse: no selected run has extend/prefill steps on rank 0\n"},
	} {
		code, out, errOut := runHistory(db, c.args...)
		if code != exitError || !strings.Contains(errOut, c.want) || out != "" {
			t.Errorf("%q: exit %d, stderr %q (want %q), stdout:\n%s", c.args, code, errOut, c.want, out)
		}
	}
	// (one run's report: the history's selection, not the runs', is empty)
	code, _, errOut := runCmd(t, "--db", db, "report", "--markdown", filepath.Join(t.TempDir(), "r.md"), historyRuns[0].label,
		"--history", "--metric step_time --tag branch=mian")
	if code != exitError || !strings.Contains(errOut, "carries branch=mian") {
		t.Errorf("report --history on an empty selection: exit %d: %s", code, errOut)
	}
}
