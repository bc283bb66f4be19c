package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/stats"
)

// fakeKernel is one kernel of a synthetic side: its family and its time in
// each step of each rank.
type fakeKernel struct {
	name, family string
	ns           func(rank, step int) int64
}

// fakeSide is one run with one stage, decode: steps steps on each of
// ranks ranks, each step the kernels one after another on one stream
// (busy = their summed time, no overlap) and idle(rank, step) more of GPU
// window; exposed communication is the communication kernels' time.
func fakeSide(label string, ranks, steps int, kernels []fakeKernel, idle func(rank, step int) int64) *queries.CompareSide {
	s := &queries.CompareSide{Run: queries.CompareRunRow{Label: label, Framework: "sglang"}}
	total := map[string]int64{}
	var stageNS int64
	for r := range ranks {
		for st := range steps {
			var busy, comm int64
			for _, k := range kernels {
				ns := k.ns(r, st)
				busy += ns
				if k.family == "communication" {
					comm += ns
				}
				total[k.name] += ns
				s.KernelSteps = append(s.KernelSteps, queries.CompareKernelStepsRow{Stage: "decode", Kernel: k.name, Rank: int64(r),
					TraceID: int64(r + 1), Step: int64(st + 1), NS: ns, Launches: 1})
			}
			stageNS += busy
			w := busy + idle(r, st)
			s.Steps = append(s.Steps, queries.CompareStepsRow{Stage: "decode", Rank: int64(r), TraceID: int64(r + 1), Step: int64(st + 1),
				Source: "step_annotation", Kernels: int64(len(kernels)), KernelNS: busy, BusyNS: busy, WindowNS: w, IdleNS: w - busy,
				ExposedCommNS: comm})
		}
	}
	for _, k := range kernels {
		s.Kernels = append(s.Kernels, queries.CompareKernelsRow{Stage: "decode", Kernel: k.name, Family: k.family,
			NS: total[k.name], Launches: int64(ranks * steps), StageNS: stageNS})
	}
	return s
}

var gates = CompareOptions{Alpha: 0.05, ThresholdPct: 5, KernelThreshold: 10, MinDeltaNS: 1000, MinSharePct: 1, RankAll: true}

// noisy is base µs with a seeded +-2% noise per (rank, step), times factor.
func noisy(seed uint64, base float64, factor float64) func(rank, step int) int64 {
	return func(rank, step int) int64 {
		r := rand.New(rand.NewPCG(seed, uint64(rank*1000+step)))
		return int64(base * 1000 * factor * (1 + 0.04*(r.Float64()-0.5)))
	}
}

func twoKernels(seed uint64, factor float64) []fakeKernel {
	return []fakeKernel{
		{"gemm_a", "gemm", noisy(seed, 300, factor)},
		{"attn_b", "attention", noisy(seed+1, 100, factor)},
	}
}

// TestCompareRanksAreNotSamples (issue 33 item 3): TP ranks record the
// same steps, so with --rank all the samples are the steps, never one per
// rank and step: 3 steps a side stay "too few to test" whatever the
// number of ranks, where pooling 2 ranks gave 6 vs 6 steps and p = 0.002.
func TestCompareRanksAreNotSamples(t *testing.T) {
	t.Parallel()
	idle := func(int, int) int64 { return 50_000 }
	for _, ranks := range []int{1, 2, 4, 8} {
		base := fakeSide("base", ranks, 3, twoKernels(1, 1), idle)
		cand := fakeSide("cand", ranks, 3, twoKernels(2, 1.2), idle)
		r := NewCompare(base, cand, gates)
		st := r.Stages[0]
		if st.BaseSteps != 3 || st.CandSteps != 3 || !st.TooFew {
			t.Errorf("%d ranks: %d vs %d steps, too few %v; want 3 vs 3, too few", ranks, st.BaseSteps, st.CandSteps, st.TooFew)
		}
		for _, m := range st.Summary {
			if m.Test.Significant || m.Base.N != 3 {
				t.Errorf("%d ranks: %s tested on %d samples: %+v", ranks, m.Metric, m.Base.N, m.Test)
			}
		}
		for _, k := range st.Kernels {
			if k.Test.Significant || k.Base.N != 3 {
				t.Errorf("%d ranks: kernel %s on %d samples: %+v", ranks, k.Kernel, k.Base.N, k.Test)
			}
		}
		if r.Verdict.Verdict != VerdictCannotDecide {
			t.Errorf("%d ranks: verdict %+v", ranks, r.Verdict)
		}
		if ranks > 1 && len(st.Ranks) != ranks {
			t.Errorf("%d ranks: per-rank breakdown of %d ranks", ranks, len(st.Ranks))
		}
	}
	// Over random rank counts and step counts, the number of samples is
	// the number of steps, and what is significant with R ranks is what is
	// significant with the slowest rank's steps alone.
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 40 {
		ranks, steps := 1+rng.IntN(8), 2+rng.IntN(6)
		base := fakeSide("base", ranks, steps, twoKernels(uint64(10*i), 1), idle)
		cand := fakeSide("cand", ranks, steps, twoKernels(uint64(10*i+5), 1.02), idle)
		st := NewCompare(base, cand, gates).Stages[0]
		if st.BaseSteps != steps || st.CandSteps != steps || st.TooFew != (steps < stats.MinSamples) {
			t.Errorf("%d ranks x %d steps: %d vs %d samples, too few %v", ranks, steps, st.BaseSteps, st.CandSteps, st.TooFew)
		}
	}
}

// TestCompareSlowestRankSetsTheStep: with every rank, each step's sample
// is the row of the rank with the largest GPU window, for every figure:
// the step time, the kernel samples and the decomposition (computed here
// by brute force from the same rows).
func TestCompareSlowestRankSetsTheStep(t *testing.T) {
	t.Parallel()
	// Rank 1 idles 200 µs more in even steps (5 of 9): it sets those and
	// is the straggler, rank 2 the others.
	idle := func(rank, step int) int64 {
		if rank == 1 && step%2 == 0 {
			return 250_000
		}
		return int64(40_000 + 1000*rank)
	}
	base := fakeSide("base", 3, 9, twoKernels(3, 1), idle)
	cand := fakeSide("cand", 3, 9, twoKernels(4, 1.1), idle)
	r := NewCompare(base, cand, gates)
	st := r.Stages[0]
	setting := func(s *queries.CompareSide) []queries.CompareStepsRow {
		var out []queries.CompareStepsRow
		for step := int64(1); step <= 9; step++ {
			var best *queries.CompareStepsRow
			for i := range s.Steps {
				row := &s.Steps[i]
				if row.Step == step && (best == nil || row.WindowNS > best.WindowNS) {
					best = row
				}
			}
			out = append(out, *best)
		}
		return out
	}
	bs, cs := setting(base), setting(cand)
	windows := func(rows []queries.CompareStepsRow) []float64 {
		var out []float64
		for _, r := range rows {
			out = append(out, float64(r.WindowNS))
		}
		return out
	}
	if got, want := st.Summary[0].Base.MedianNS, stats.Median(windows(bs)); st.Summary[0].Metric != "step time" || got != want {
		t.Errorf("base step time median %v, want %v (the slowest rank's)", got, want)
	}
	if got, want := st.Summary[0].Candidate.MedianNS, stats.Median(windows(cs)); got != want {
		t.Errorf("candidate step time median %v, want %v", got, want)
	}
	// The kernel's sample in a step is its time on the rank that sets it.
	kernelOn := func(s *queries.CompareSide, rows []queries.CompareStepsRow, name string) []float64 {
		var out []float64
		for _, r := range rows {
			for _, k := range s.KernelSteps {
				if k.Kernel == name && k.Rank == r.Rank && k.Step == r.Step {
					out = append(out, float64(k.NS))
				}
			}
		}
		return out
	}
	for _, k := range st.Kernels {
		if want := stats.Median(kernelOn(base, bs, k.Kernel)); k.Base.MedianNS != want {
			t.Errorf("%s base median %v, want %v", k.Kernel, k.Base.MedianNS, want)
		}
		if k.BaseLaunchStep != 1 {
			t.Errorf("%s: %v launches per step, want 1 (per rank and step)", k.Kernel, k.BaseLaunchStep)
		}
	}
	// The decomposition adds up to the mean step-time delta of those rows.
	mean := func(xs []float64) float64 {
		var s float64
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	wantDelta := int64(math.Round(mean(windows(cs)) - mean(windows(bs))))
	var sum int64
	parts := map[string]int64{}
	for _, p := range st.Decomposition {
		sum += p.DeltaNS
		parts[p.Part] = p.CandNS
	}
	if st.StepDeltaNS != wantDelta || sum != wantDelta || st.DeltaStatistic != StatMean {
		t.Errorf("decomposition sums to %d, step delta %d (%s); want %d, mean per step", sum, st.StepDeltaNS, st.DeltaStatistic, wantDelta)
	}
	if want := int64(math.Round(mean(kernelOn(cand, cs, "gemm_a")))); parts["family:gemm"] != want {
		t.Errorf("candidate gemm part %d, want %d", parts["family:gemm"], want)
	}
	if st.BaseStraggler == nil || *st.BaseStraggler != 1 {
		t.Errorf("base straggler %v, want rank 1", st.BaseStraggler)
	}
}

// TestCompareNamedDelta (issue 33 item 5): the summary's delta is of the
// median per step, the decomposition's of the mean per step, and each says
// so; the decomposition adds up exactly to the mean delta.
func TestCompareNamedDelta(t *testing.T) {
	t.Parallel()
	// Skewed idle: the median and the mean step time move differently.
	idleB := func(_, step int) int64 { return int64(10_000 + 100_000*(step%5/4)) }
	idleC := func(_, step int) int64 { return int64(10_000 + 400_000*(step%5/4)) }
	o := gates
	o.RankAll = false
	r := NewCompare(fakeSide("base", 1, 10, twoKernels(5, 1), idleB), fakeSide("cand", 1, 10, twoKernels(6, 1), idleC), o)
	st := r.Stages[0]
	var sum int64
	for _, p := range st.Decomposition {
		sum += p.DeltaNS
	}
	step := st.Summary[0]
	if step.Statistic != StatMedian || st.DeltaStatistic != StatMean || sum != st.StepDeltaNS {
		t.Errorf("statistics %q / %q, parts sum %d vs %d", step.Statistic, st.DeltaStatistic, sum, st.StepDeltaNS)
	}
	// Two steps of ten idle 300 µs more: the mean moves by 60 µs, the
	// median by about the noise only.
	if math.Abs(float64(st.StepDeltaNS)-60_000) > 2_000 || math.Abs(step.DeltaNS) > 10_000 {
		t.Errorf("mean delta %d ns, median delta %v ns; want about 60000 and about 0", st.StepDeltaNS, step.DeltaNS)
	}
	for _, m := range st.Summary {
		if m.Statistic != StatMedian {
			t.Errorf("%s: statistic %q", m.Metric, m.Statistic)
		}
	}
}

// TestCompareBelowThresholds (issue 33 item 9): everything 2% slower over
// 30 steps a side is significant but under the 5% and 10% thresholds: the
// verdict is "no regression" and names each significant row, where it said
// "no significant change".
func TestCompareBelowThresholds(t *testing.T) {
	t.Parallel()
	idle := func(int, int) int64 { return 50_000 }
	o := gates
	o.RankAll = false
	r := NewCompare(fakeSide("base", 1, 30, twoKernels(11, 1), idle), fakeSide("cand", 1, 30, twoKernels(21, 1.02), idle), o)
	if r.Verdict.Verdict != VerdictNoRegression || len(r.Verdict.Rows) != 0 {
		t.Fatalf("verdict %+v, want no regression", r.Verdict)
	}
	// The rows the verdict must name, found from the report's own tests:
	// every significant gated summary row and every significant kernel.
	var want []string
	st := r.Stages[0]
	for _, m := range st.Summary {
		if m.Test.Significant && (m.Metric == "step time" || m.Metric == "GPU busy") {
			want = append(want, fmt.Sprintf("decode %s %+.1f%%", m.Metric, *m.DeltaPct))
		}
	}
	for _, k := range st.Kernels {
		if k.Test.Significant {
			want = append(want, fmt.Sprintf("decode kernel %s %+.1f%%", k.Kernel, *k.DeltaPct))
		}
	}
	// 2% of 400 µs busy over +-2% noise per kernel and 30 steps: the busy
	// time and both kernels are significant.
	if len(want) < 3 || !slices.Equal(r.Verdict.Below, want) {
		t.Errorf("below the thresholds %q, want %q", r.Verdict.Below, want)
	}
	// The same pair 20% slower is a regression; the significant rows it
	// names are not listed again below the thresholds.
	r = NewCompare(fakeSide("base", 1, 30, twoKernels(11, 1), idle), fakeSide("cand", 1, 30, twoKernels(21, 1.2), idle), o)
	if r.Verdict.Verdict != VerdictRegression || len(r.Verdict.Below) != 0 {
		t.Errorf("20%% slower: verdict %+v, want a regression with nothing below the thresholds", r.Verdict)
	}
}

// TestCompareCountUnits (issue 33 item 9): in JSON a count row (launches
// per step) holds its figures in its unit, "median": 2, not as
// microseconds ("median_us": 0.002); time rows keep median_us and
// median_ns. The JSON reads back to the same report.
func TestCompareCountUnits(t *testing.T) {
	t.Parallel()
	idle := func(int, int) int64 { return 50_000 }
	o := gates
	o.RankAll = false
	r := NewCompare(fakeSide("base", 1, 8, twoKernels(1, 1), idle), fakeSide("cand", 1, 8, twoKernels(2, 1), idle), o)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Stages []struct {
			Summary []map[string]any `json:"summary"`
		} `json:"stages"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, m := range doc.Stages[0].Summary {
		base := m["base"].(map[string]any)
		switch m["unit"] {
		case UnitCount:
			seen++
			// two kernels, one launch each per step
			if base["median"] != 2.0 || m["delta"] != 0.0 || base["median_us"] != nil || m["delta_ns"] != nil {
				t.Errorf("count row %v", m)
			}
		case UnitNS:
			if base["median_us"] == nil || base["median_ns"] == nil || base["median"] != nil {
				t.Errorf("time row %v", m)
			}
		default:
			t.Errorf("row %v: unit %v", m["metric"], m["unit"])
		}
	}
	if seen != 1 {
		t.Errorf("%d count rows, want 1 (launches)", seen)
	}
	var back CompareReport
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got, want := back.Stages[0].Summary, r.Stages[0].Summary; !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v\nwant %+v", got, want)
	}
}

// TestCompareCommunicationWaits (issue 33 item 10): a communication
// kernel's time includes waiting for other ranks, so its change beyond
// the thresholds gates only when exposed communication or step time moved
// the same way too, and the row says which (or why not).
func TestCompareCommunicationWaits(t *testing.T) {
	t.Parallel()
	o := gates
	o.RankAll = false
	sides := func(gemm, comm float64) []fakeKernel {
		return []fakeKernel{
			{"gemm_a", "gemm", noisy(31, 300, gemm)},
			{"nccl_allreduce", "communication", noisy(32, 100, comm)},
		}
	}
	// hidden makes the communication all hidden under computation but
	// exposedNS per step (the case of a rank that waits while the others
	// compute): the exposed time no longer follows the kernel's.
	hidden := func(s *queries.CompareSide, exposedNS int64) *queries.CompareSide {
		for i := range s.Steps {
			s.Steps[i].ExposedCommNS = exposedNS + int64(i%3)*100
		}
		return s
	}
	idle := func(int, int) int64 { return 50_000 }
	slowIdle := func(int, int) int64 { return 200_000 }
	commRow := func(r *CompareReport) CompareKernel {
		for _, k := range r.Stages[0].Kernels {
			if k.Kernel == "nccl_allreduce" {
				return k
			}
		}
		t.Fatalf("no communication row in %+v", r.Stages[0].Kernels)
		return CompareKernel{}
	}
	for _, c := range []struct {
		name          string
		base, cand    *queries.CompareSide
		verdict, gate string
	}{
		// The DLRM case: the candidate's communication kernels take 50%
		// longer (waiting), its gemm is 30% faster, step time fell and
		// exposed communication stayed: not a regression.
		{"waits only", hidden(fakeSide("base", 1, 30, sides(1, 1), idle), 5_000),
			hidden(fakeSide("cand", 1, 30, sides(0.7, 1.5), idle), 5_000),
			VerdictImprovement, "not gated: its time includes waiting for other ranks, and neither exposed communication nor step time rose"},
		// All communication exposed: exposed communication rose with it.
		{"exposed", fakeSide("base", 1, 30, sides(1, 1), idle), fakeSide("cand", 1, 30, sides(1, 1.5), idle),
			VerdictRegression, "gated: exposed communication rose too"},
		// Hidden, but the step got slower (150 µs more idle): step time rose.
		{"step time", hidden(fakeSide("base", 1, 30, sides(1, 1), idle), 5_000),
			hidden(fakeSide("cand", 1, 30, sides(1, 1.5), slowIdle), 5_000),
			VerdictRegression, "gated: step time rose too"},
	} {
		r := NewCompare(c.base, c.cand, o)
		k := commRow(r)
		wantVerdict := ""
		if c.verdict == VerdictRegression {
			wantVerdict = VerdictRegression
		}
		if !k.IncludesWaits || k.CommGate != c.gate || k.Verdict != wantVerdict || k.DeltaPct == nil || *k.DeltaPct < 45 {
			t.Errorf("%s: communication row waits %v, gate %q, verdict %q, delta %v; want gate %q, verdict %q, about +50%%",
				c.name, k.IncludesWaits, k.CommGate, k.Verdict, k.DeltaPct, c.gate, wantVerdict)
		}
		if r.Verdict.Verdict != c.verdict {
			t.Errorf("%s: verdict %+v, want %s", c.name, r.Verdict, c.verdict)
		}
		for _, g := range r.Stages[0].Kernels {
			if g.Kernel == "gemm_a" && g.IncludesWaits {
				t.Errorf("%s: gemm marked as including waits", c.name)
			}
		}
	}
}
