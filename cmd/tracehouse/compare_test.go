package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/synth"
)

// attentionMatch names the decode attention kernel of the synthetic SGLang
// recipe.
const attentionMatch = "BatchDecodeWithPagedKVCache"

// fusedAllReduce is FlashInfer's fused all-reduce + residual norm kernel.
const fusedAllReduce = "void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_lamport<__nv_bfloat16, 2>(flashinfer::trtllm_allreduce_fusion::AllReduceFusionParams<__nv_bfloat16>)"

// compareRuns are synthetic SGLang decode runs with known differences from
// "base" (16 steps, 14 after dropping the edges).
var compareRuns = []struct {
	label string
	opt   synth.Options
}{
	{"base", synth.Options{Seed: 1, Steps: 16}},
	// one kernel (decode attention) 20% slower in every step
	{"slow20", synth.Options{Seed: 2, Steps: 16, Edits: []synth.Edit{{Match: attentionMatch, Factor: 1.2}}}},
	// the same deployment again: other noise, half the steps
	{"again8", synth.Options{Seed: 3, Steps: 8}},
	// every kernel 2% slower
	{"all2", synth.Options{Seed: 4, Steps: 16, Edits: []synth.Edit{{Factor: 1.02}}}},
	// the QKV GEMM under another tile name, RoPE gone, a kernel added
	{"buckets", synth.Options{Seed: 5, Steps: 16, Edits: []synth.Edit{
		{Match: "nvjet_tst_64x8_64x16", Into: []string{"nvjet_tst_64x16_64x8_4x1_v_bz_TNT"}},
		{Match: "rotary_embedding", Into: []string{}},
		{Match: "act_and_mul", Into: []string{"", "added_kernel"}},
	}}},
	// TP 2 with FlashInfer's all-reduce fusion on: against tp2 (off, the
	// split all-reduce -> norm chain runs) the fusion is switched off
	{"arfused", synth.Options{Seed: 6, Steps: 16, Ranks: 2, Edits: []synth.Edit{
		{Match: "cross_device_reduce", Into: []string{fusedAllReduce}},
	}}},
	// 5 steps, 3 after the edges: too few to test
	{"base3", synth.Options{Seed: 7, Steps: 5}},
	{"slow3", synth.Options{Seed: 8, Steps: 5, Edits: []synth.Edit{{Match: attentionMatch, Factor: 1.2}}}},
	// another TP size
	{"tp2", synth.Options{Seed: 9, Steps: 16, Ranks: 2}},
	// prefill and decode, and the same deployment whose decode traces did
	// not land (prefill only)
	{"both", synth.Options{Seed: 10, Steps: 8, Stage: bothStages}},
	{"nodecode", synth.Options{Seed: 11, Steps: 8, Stage: synth.StagePrefill}},
}

// bothStages in compareRuns asks for SGLang's default layout, an EXTEND
// and a DECODE trace per rank (the other runs are decode only).
const bothStages = "prefill+decode"

// TestCompareEndToEnd writes the runs, ingests them once and checks that
// each comparison finds exactly the difference built into it.
func TestCompareEndToEnd(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, r := range compareRuns {
		o := r.opt
		o.Dir, o.Run, o.Framework = root, r.label, synth.SGLang
		switch o.Stage {
		case "":
			o.Stage = synth.StageDecode
		case bothStages:
			o.Stage = ""
		}
		o.Noise, o.BatchSize = 0.02, 32
		if _, err := synth.Generate(o); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(t.TempDir(), "cmp.duckdb")
	io, _, errOut := testIO("")
	if code := run([]string{"--db", db, "ingest", root}, io, testEnv); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errOut)
	}
	for _, c := range []struct {
		name string
		test func(*testing.T, string)
	}{
		{"SlowKernel", testCompareSlowKernel},
		{"SameRunAgain", testCompareSameRunAgain},
		{"UniformTwoPercent", testCompareUniformTwoPercent},
		{"Buckets", testCompareBuckets},
		{"FusionSwitchedOff", testCompareFusionSwitchedOff},
		{"TooFewSteps", testCompareTooFewSteps},
		{"AbsentStage", testCompareAbsentStage},
		{"EmptySelection", testCompareEmptySelection},
		{"Mismatch", testCompareMismatch},
		{"Decomposition", testCompareDecomposition},
		{"NamedDelta", testCompareNamedDelta},
		{"Formats", testCompareFormats},
		{"Selectors", testCompareSelectors},
		{"Goldens", testCompareGoldens},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, db) })
	}
}

func runCompare(db string, args ...string) (int, string, string) {
	io, out, errOut := testIO("")
	code := run(append([]string{"--db", db, "compare"}, args...), io, testEnv)
	return code, out.String(), errOut.String()
}

// compareMemo holds the output of compare command lines the subtests
// share (compareOnce): the warehouse is read-only to them, so the same
// command line prints the same bytes (testCompareFormats checks that by
// running commands twice, without the memo).
var compareMemo sync.Map // db and args joined by NUL -> *memoRun

// compareOnce runs `compare ARGS` on db once per test binary.
func compareOnce(db string, args ...string) (int, string, string) {
	v, _ := compareMemo.LoadOrStore(strings.Join(append([]string{db}, args...), "\x00"), &memoRun{})
	m := v.(*memoRun)
	m.once.Do(func() { m.code, m.out, m.errOut = runCompare(db, args...) })
	return m.code, m.out, m.errOut
}

func compareJSON(t *testing.T, db string, args ...string) (int, analysis.CompareReport) {
	t.Helper()
	code, out, errOut := compareOnce(db, append(args, "--format", "json")...)
	var r analysis.CompareReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("exit %d, %v: %s\n%s", code, err, errOut, out)
	}
	return code, r
}

func decodeStage(t *testing.T, r analysis.CompareReport) analysis.CompareStage {
	t.Helper()
	for _, s := range r.Stages {
		if s.Stage == "decode" {
			return s
		}
	}
	t.Fatalf("no decode stage in %+v", r.Stages)
	return analysis.CompareStage{}
}

func testCompareSlowKernel(t *testing.T, db string) {
	code, r := compareJSON(t, db, "base", "slow20", "--fail-on-regression")
	if code != exitRegression || r.Verdict.Verdict != analysis.VerdictRegression {
		t.Fatalf("exit %d, verdict %+v", code, r.Verdict)
	}
	st := decodeStage(t, r)
	if st.BaseSteps != 14 || st.CandSteps != 14 {
		t.Errorf("steps %d vs %d, want 14 vs 14 (edges dropped)", st.BaseSteps, st.CandSteps)
	}
	var regressed []string
	for _, k := range st.Kernels {
		if k.Verdict == analysis.VerdictRegression {
			regressed = append(regressed, k.Kernel)
			if k.DeltaPct == nil || *k.DeltaPct < 17 || *k.DeltaPct > 23 || !k.Test.Significant {
				t.Errorf("%s: delta %v%%, test %+v; want about +20%%, significant", k.Kernel, k.DeltaPct, k.Test)
			}
		}
	}
	if len(regressed) != 1 || !strings.Contains(regressed[0], attentionMatch) {
		t.Errorf("regressed kernels %q, want only the decode attention", regressed)
	}
	if len(r.Verdict.Rows) != 1 || !strings.Contains(r.Verdict.Rows[0], attentionMatch) {
		t.Errorf("verdict rows %q, want the attention kernel only", r.Verdict.Rows)
	}
	// Without --fail-on-regression the exit status stays 0.
	if code, _, _ := compareOnce(db, "base", "slow20", "--format", "table"); code != 0 {
		t.Errorf("exit %d without --fail-on-regression", code)
	}
}

func testCompareSameRunAgain(t *testing.T, db string) {
	code, r := compareJSON(t, db, "base", "again8", "--fail-on-regression")
	// A row may be significant by chance (a memcpy at -1.9%): the verdict
	// then names it below the thresholds and still passes.
	if code != 0 || (r.Verdict.Verdict != analysis.VerdictNoChange && r.Verdict.Verdict != analysis.VerdictNoRegression) ||
		len(r.Verdict.Rows) != 0 {
		t.Fatalf("exit %d, verdict %+v", code, r.Verdict)
	}
	st := decodeStage(t, r)
	if st.BaseSteps != 14 || st.CandSteps != 6 {
		t.Errorf("steps %d vs %d, want 14 vs 6", st.BaseSteps, st.CandSteps)
	}
	for _, k := range st.Kernels {
		if k.Bucket != analysis.BucketSame {
			t.Errorf("%s in bucket %s", k.Kernel, k.Bucket)
		}
		if k.BaseLaunchStep != k.CandLaunchStep {
			t.Errorf("%s: launches per step %v vs %v", k.Kernel, k.BaseLaunchStep, k.CandLaunchStep)
		}
	}
	for _, m := range st.Summary {
		if m.Metric == "launches" && m.DeltaNS != 0 {
			t.Errorf("launches per step differ: %+v", m)
		}
	}
}

func testCompareUniformTwoPercent(t *testing.T, db string) {
	code, r := compareJSON(t, db, "base", "all2", "--fail-on-regression")
	if code != 0 || r.Verdict.Verdict == analysis.VerdictRegression {
		t.Fatalf("exit %d, verdict %+v", code, r.Verdict)
	}
	st := decodeStage(t, r)
	significant := 0
	for _, k := range st.Kernels {
		if k.Test.Significant && k.DeltaPct != nil && *k.DeltaPct > 1 && *k.DeltaPct < 3 {
			significant++
		}
		if k.Verdict != "" {
			t.Errorf("%s: verdict %s at %v%%", k.Kernel, k.Verdict, *k.DeltaPct)
		}
	}
	if significant < 3 {
		t.Errorf("only %d kernel rows significantly ~2%% slower", significant)
	}
	// Issue 33 item 9: the verdict names what is significant below the
	// thresholds, and the text and markdown print the thresholds in force.
	sig := 0
	for _, m := range st.Summary {
		if m.Test.Significant && (m.Metric == "step time" || m.Metric == "GPU busy") {
			sig++
		}
	}
	for _, k := range st.Kernels {
		if k.Test.Significant {
			sig++
		}
	}
	if r.Verdict.Verdict != analysis.VerdictNoRegression || len(r.Verdict.Below) != sig {
		t.Errorf("verdict %q naming %d rows below the thresholds, want no regression naming %d", r.Verdict.Verdict, len(r.Verdict.Below), sig)
	}
	wantLine := fmt.Sprintf("verdict: no regression: %d significant changes below the thresholds (5%% step/busy time; 10%% and 1 µs kernels): ", sig)
	for _, f := range []string{"table", "markdown"} {
		_, out, _ := compareOnce(db, "base", "all2", "--format", f)
		if !strings.Contains(out, wantLine) || !strings.Contains(out, "beyond 5%, or a kernel with >= 1% share beyond 10% and 1 µs per step") {
			t.Errorf("%s: no verdict line %q or thresholds:\n%s", f, wantLine, out)
		}
	}
}

func testCompareBuckets(t *testing.T, db string) {
	_, r := compareJSON(t, db, "base", "buckets")
	st := decodeStage(t, r)
	got := map[string][]string{}
	for _, k := range st.Kernels {
		if k.Bucket == analysis.BucketSame {
			continue
		}
		name := k.Kernel
		if k.Bucket == analysis.BucketRenamed {
			name = k.BaseKernel + " -> " + k.Kernel
		}
		got[k.Bucket] = append(got[k.Bucket], name)
	}
	want := map[string][]string{
		analysis.BucketRenamed: {"nvjet_tst_64x8_64x16_4x1_v_bz_TNT -> nvjet_tst_64x16_64x8_4x1_v_bz_TNT"},
		analysis.BucketGone:    {"void vllm::rotary_embedding_kernel<c10::BFloat16, true>"},
		analysis.BucketNew:     {"added_kernel"},
	}
	for b, names := range want {
		if !slices.Equal(got[b], names) {
			t.Errorf("bucket %s: %q, want %q", b, got[b], names)
		}
	}
	if len(got) != len(want) {
		t.Errorf("buckets %v", got)
	}
}

func testCompareFusionSwitchedOff(t *testing.T, db string) {
	_, r := compareJSON(t, db, "arfused", "tp2")
	st := decodeStage(t, r)
	var found bool
	for _, f := range st.Fusions {
		if f.ID == "sglang-flashinfer-allreduce-fusion" {
			found = true
			if !slices.Equal(f.BaseStatus, []string{"already fused"}) || !slices.Equal(f.CandStatus, []string{"opportunity"}) ||
				f.Change != "switched off" || f.Switch != "--enable-flashinfer-allreduce-fusion" {
				t.Errorf("fusion row %+v", f)
			}
		}
	}
	if !found {
		t.Errorf("no change for sglang-flashinfer-allreduce-fusion in %+v", st.Fusions)
	}
	_, out, _ := runCompare(db, "arfused", "tp2")
	if !strings.Contains(out, "switched off") {
		t.Errorf("text has no fusion change:\n%s", out)
	}
}

// testCompareTooFewSteps (issue 33 item 8): with 3 steps a side nothing
// can be tested, so the gate cannot decide (exit 1), whatever the size
// thresholds say; --allow-untested lets them decide (exit 3), marked.
func testCompareTooFewSteps(t *testing.T, db string) {
	code, r := compareJSON(t, db, "base3", "slow3", "--fail-on-regression")
	st := decodeStage(t, r)
	if !st.TooFew || st.BaseSteps != 3 || st.CandSteps != 3 {
		t.Fatalf("too few %v, steps %d vs %d", st.TooFew, st.BaseSteps, st.CandSteps)
	}
	for _, k := range st.Kernels {
		if k.Test.Method != "too few" || k.Test.P != nil {
			t.Errorf("%s tested with 3 steps: %+v", k.Kernel, k.Test)
		}
		if k.Verdict != "" {
			t.Errorf("%s: gate %q on untested rows", k.Kernel, k.Verdict)
		}
	}
	if code != exitError || r.Verdict.Verdict != analysis.VerdictCannotDecide ||
		!slices.Equal(r.Verdict.CannotDecide, []string{"decode 3 vs 3 steps; at least 4 a side"}) {
		t.Errorf("exit %d, verdict %+v: want cannot decide, exit 1", code, r.Verdict)
	}
	code, out, errOut := compareOnce(db, "base3", "slow3", "--fail-on-regression", "--format", "table")
	if code != exitError || errOut != "tracehouse: cannot decide: decode 3 vs 3 steps; at least 4 a side\n" ||
		!strings.Contains(out, "too few steps to test") || !strings.Contains(out, "verdict: cannot decide") {
		t.Errorf("exit %d, stderr %q:\n%s", code, errOut, out)
	}
	if code, _, _ := compareOnce(db, "base3", "slow3"); code != 0 {
		t.Errorf("without --fail-on-regression: exit %d", code)
	}
	code, r = compareJSON(t, db, "base3", "slow3", "--fail-on-regression", "--allow-untested")
	if code != exitRegression || r.Verdict.Verdict != analysis.VerdictRegression || !r.Verdict.Untested ||
		len(r.Verdict.CannotDecide) != 0 || !r.Gates.AllowUntested {
		t.Errorf("--allow-untested: exit %d, verdict %+v: want a regression from the thresholds, marked untested", code, r.Verdict)
	}
}

// testCompareAbsentStage (issue 33 item 1): a stage with steps on one
// side only is not compared (no -100% step time, no improvement) and
// cannot be decided: exit 1 under --fail-on-regression or --strict, one
// line naming the stage and the side.
func testCompareAbsentStage(t *testing.T, db string) {
	for _, c := range []struct {
		base, cand, side, line string
	}{
		{"both", "nodecode", analysis.SideCandidate, "cannot decide: decode has no steps in the candidate, nodecode (6 in the base, both)"},
		{"nodecode", "both", analysis.SideBase, "cannot decide: decode has no steps in the base, nodecode (6 in the candidate, both)"},
	} {
		code, r := compareJSON(t, db, c.base, c.cand, "--fail-on-regression")
		if code != exitError || r.Verdict.Verdict != analysis.VerdictCannotDecide {
			t.Errorf("%s -> %s: exit %d, verdict %+v", c.base, c.cand, code, r.Verdict)
		}
		var absent, compared []string
		for _, st := range r.Stages {
			if st.Absent != "" {
				absent = append(absent, st.Stage+":"+st.Absent)
				if len(st.Summary) != 0 || len(st.Kernels) != 0 || len(st.Decomposition) != 0 {
					t.Errorf("%s -> %s: absent stage %s has rows: %+v", c.base, c.cand, st.Stage, st)
				}
			} else {
				compared = append(compared, st.Stage)
			}
		}
		if !slices.Equal(absent, []string{"decode:" + c.side}) || !slices.Equal(compared, []string{"prefill"}) {
			t.Errorf("%s -> %s: absent %q, compared %q", c.base, c.cand, absent, compared)
		}
		for _, args := range [][]string{{"--fail-on-regression"}, {"--strict"}} {
			code, out, errOut := runCompare(db, append([]string{c.base, c.cand}, args...)...)
			if code != exitError || errOut != "tracehouse: "+c.line+"\n" {
				t.Errorf("%s -> %s %s: exit %d, stderr %q, want %q", c.base, c.cand, args, code, errOut, c.line)
			}
			if !strings.Contains(out, "not comparable: decode has no steps in the "+c.side) || strings.Contains(out, "-100.0%") ||
				strings.Contains(out, "improvement") {
				t.Errorf("%s -> %s: text:\n%s", c.base, c.cand, out)
			}
		}
		if code, _, _ := compareOnce(db, c.base, c.cand); code != 0 {
			t.Errorf("%s -> %s without a gate: exit %d", c.base, c.cand, code)
		}
	}
}

// testCompareEmptySelection (issue 33 item 4): a stage or rank neither run
// has is an error, not an empty pass.
func testCompareEmptySelection(t *testing.T, db string) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"base", "slow20", "--stage", "prefill", "--fail-on-regression"},
			"tracehouse: neither base nor slow20 has extend/prefill steps on rank 0\n"},
		{[]string{"base", "slow20", "--stage", "prefill", "--rank", "all"},
			"tracehouse: neither base nor slow20 has extend/prefill steps on any rank\n"},
		{[]string{"base", "slow20", "--rank", "7", "--fail-on-regression"},
			"tracehouse: run base has no GPU events on rank 7 (ranks: 0); see --rank\n"},
		{[]string{"tag:branch=mian", "slow20", "--fail-on-regression"}, "no run"},
	} {
		code, out, errOut := runCompare(db, c.args...)
		if code != exitError || !strings.Contains(errOut, c.want) || out != "" {
			t.Errorf("%q: exit %d, stderr %q (want %q), stdout:\n%s", c.args, code, errOut, c.want, out)
		}
	}
}

func testCompareMismatch(t *testing.T, db string) {
	code, out, _ := runCompare(db, "base", "tp2")
	if code != 0 || !strings.Contains(out, "warning: TP size differs: 1 (base) vs 2 (candidate)") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, _, errOut := runCompare(db, "base", "tp2", "--strict")
	if code != exitUsage || !strings.Contains(errOut, "TP size differs") {
		t.Errorf("--strict: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCompare(db, "base", "again8", "--strict"); code != 0 {
		t.Errorf("--strict on comparable runs: exit %d: %s", code, errOut)
	}
}

// testCompareDecomposition: the parts add up exactly to the step-time delta,
// which is the delta of the mean step times of compare_steps.
func testCompareDecomposition(t *testing.T, db string) {
	_, r := compareJSON(t, db, "base", "slow20")
	st := decodeStage(t, r)
	var sum int64
	for _, p := range st.Decomposition {
		sum += p.DeltaNS
		if p.BaseNS+p.DeltaNS-p.CandNS > 1 || p.CandNS-p.BaseNS-p.DeltaNS > 1 {
			t.Errorf("%s: %d -> %d but delta %d", p.Part, p.BaseNS, p.CandNS, p.DeltaNS)
		}
	}
	if sum != st.StepDeltaNS || sum == 0 {
		t.Errorf("parts sum to %d, step delta %d", sum, st.StepDeltaNS)
	}
}

// testCompareFormats: every format says the verdict or holds the files
// and fields it should. (That the output does not change from one run to
// the next: the golden files of testCompareGoldens and
// TestCompareGoldenDemo, in every format, written by other processes.)
func testCompareFormats(t *testing.T, db string) {
	for _, f := range []string{"table", "markdown"} {
		code, out, errOut := compareOnce(db, "base", "slow20", "--format", f)
		if code != 0 || !strings.Contains(out, "verdict: regression") {
			t.Errorf("%s: exit %d %s\n%s", f, code, errOut, out)
		}
	}
	dir := t.TempDir()
	code, _, errOut := runCompare(db, "base", "slow20", "--format", "csv", "--out", dir)
	if code != 0 {
		t.Fatalf("csv: exit %d: %s", code, errOut)
	}
	for _, name := range []string{"compare.summary.csv", "compare.decomposition.csv", "compare.kernels.csv",
		"compare.overlap.csv", "compare.fusions.csv"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The CSV files name the statistic of each delta, as the other
	// formats do (testCompareNamedDelta).
	for file, want := range map[string]string{"compare.summary.csv": ",median per step,", "compare.decomposition.csv": "decode,step_time,mean per step,"} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q: %v\n%s", file, want, err, b)
		}
	}
	// JSON field names are a contract.
	_, out, _ := compareOnce(db, "base", "slow20", "--format", "json")
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"base", "candidate", "rank", "normalisation", "comparability", "stages", "verdict", "gates", "notes"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON has no %q", k)
		}
	}
}

func testCompareSelectors(t *testing.T, db string) {
	// @latest and @latest~1 are the first two runs 'runs' lists.
	io, out, _ := testIO("")
	run([]string{"--db", db, "runs", "--format", "json"}, io, testEnv)
	var runs []struct {
		Label string `json:"label"`
	}
	if err := json.Unmarshal(out.Bytes(), &runs); err != nil || len(runs) < 2 {
		t.Fatalf("runs: %v %s", err, out)
	}
	_, r := compareJSON(t, db, "@latest~1", "@latest")
	if r.Candidate.Label != runs[0].Label || r.Base.Label != runs[1].Label {
		t.Errorf("@latest~1 -> @latest resolved to %s -> %s, runs lists %s, %s", r.Base.Label, r.Candidate.Label,
			runs[1].Label, runs[0].Label)
	}
	if code, _, errOut := runCompare(db, "tag:nope=1", "@latest"); code != exitError || !strings.Contains(errOut, "no run") {
		t.Errorf("unknown tag: exit %d: %s", code, errOut)
	}
	if code, _, _ := runCompare(db, "base"); code != exitUsage {
		t.Errorf("one argument: exit %d", code)
	}
}

// testCompareNamedDelta (issue 33 item 5): every format names the
// statistic of each delta: the summary's is of the median per step, the
// decomposition's of the mean per step (CSV's: testCompareFormats, which
// writes the CSV files).
func testCompareNamedDelta(t *testing.T, db string) {
	for _, f := range []string{"table", "markdown"} {
		_, out, _ := compareOnce(db, "base", "slow20", "--format", f)
		out = strings.Join(strings.Fields(out), " ") // a long heading wraps to the width
		if !strings.Contains(out, "Step summary (median per step") || !strings.Contains(out, "= step time, mean per step") ||
			!strings.Contains(out, "the rows add up exactly to the mean step-time delta") ||
			!strings.Contains(out, "the summary's delta is of the median per step") {
			t.Errorf("%s does not name both statistics:\n%s", f, out)
		}
	}
	_, r := compareJSON(t, db, "base", "slow20")
	st := decodeStage(t, r)
	if st.DeltaStatistic != analysis.StatMean || st.Summary[0].Statistic != analysis.StatMedian {
		t.Errorf("JSON statistics %q, %q", st.DeltaStatistic, st.Summary[0].Statistic)
	}
}
