// Package analysis decides what `tracehouse compare` and `history` say:
// from the per-step rows the queries return it forms the samples, runs the
// tests and corrections of the stats package, apportions the step-time
// delta, marks change points and reaches the verdict and the exit decision.
// It formats nothing: report renders its results, cmd maps the decision to
// an exit status.
package analysis

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/stats"
	"github.com/tracehouse/tracehouse/vocab"
)

// The comparison (README "Comparing runs"): per-step samples and
// aggregates come from the compare_*.sql queries; medians, intervals, the
// Mann-Whitney tests and the Benjamini-Hochberg adjustment come from the
// stats package; this file puts them side by side and applies the two
// gates.

// Verdicts.
const (
	VerdictRegression  = "regression"
	VerdictImprovement = "improvement"
	VerdictNoChange    = "no significant change"
	// VerdictNoRegression: rows changed significantly, but none beyond
	// the thresholds (CompareVerdict.Below names them).
	VerdictNoRegression = "no regression"
	// VerdictCannotDecide: a stage has steps on one side only, or too few
	// steps to test (without AllowUntested), and no tested row regressed.
	VerdictCannotDecide = "cannot decide"
)

// Sides of a comparison, as CompareStage.Absent names them.
const (
	SideBase      = "base"
	SideCandidate = "candidate"
)

// Kernel buckets.
const (
	BucketSame    = "same"
	BucketNew     = "new"
	BucketGone    = "gone"
	BucketRenamed = "renamed"
)

// CompareOptions are the gates and filters of a comparison.
type CompareOptions struct {
	Alpha           float64 // significance level (FDR level for kernel rows)
	ThresholdPct    float64 // step time / busy growth that matters
	KernelThreshold float64 // kernel growth (%) that matters
	MinDeltaNS      float64 // and by at least this much per step
	MinSharePct     float64 // kernel share (either side) for the kernel gate: 1
	Stage           string  // "" = every stage
	RankAll         bool
	Rank            int64 // the rank compared when not RankAll
	KeepEdges       bool
	// AllowUntested lets the practical gate alone decide a stage with too
	// few steps to test; without it such a stage cannot be decided.
	AllowUntested bool
}

// CompareReport is a whole comparison. JSON names are a contract (a test
// pins them); times are µs numbers with exact *_ns integers beside them.
type CompareReport struct {
	Base          CompareRun     `json:"base"`
	Candidate     CompareRun     `json:"candidate"`
	Rank          *int64         `json:"rank"` // null: every rank
	Normalisation string         `json:"normalisation"`
	Mismatches    []string       `json:"comparability"`
	Stages        []CompareStage `json:"stages"`
	Verdict       CompareVerdict `json:"verdict"`
	Gates         CompareGates   `json:"gates"`
	Notes         []string       `json:"notes"`
}

// CompareGates echo the thresholds the verdict used.
type CompareGates struct {
	Alpha              float64 `json:"alpha"`
	ThresholdPct       float64 `json:"threshold_pct"`
	KernelThresholdPct float64 `json:"kernel_threshold_pct"`
	MinDeltaUS         float64 `json:"min_delta_us"`
	KernelMinSharePct  float64 `json:"kernel_min_share_pct"`
	// AllowUntested: the thresholds alone decide a stage with too few
	// steps to test.
	AllowUntested bool `json:"allow_untested"`
}

// CompareRun describes one side.
type CompareRun struct {
	Label      string          `json:"label"`
	Framework  string          `json:"framework"`
	Model      string          `json:"model"`
	GPUs       []string        `json:"gpus"`
	Parallel   Parallel        `json:"parallel"`
	CUDAGraph  *bool           `json:"cuda_graph"`
	Tags       []string        `json:"tags"`
	StepSource []string        `json:"step_source"`
	Steps      map[string]int  `json:"steps"`       // per stage, used
	BatchSizes map[string]*int `json:"batch_sizes"` // per stage: median, null when unknown
	Tokens     map[string]*int `json:"tokens"`      // per stage: median per step
}

// Parallel are a run's parallel sizes; nil when unknown.
type Parallel struct {
	TP *int64 `json:"tp"`
	DP *int64 `json:"dp"`
	EP *int64 `json:"ep"`
	PP *int64 `json:"pp"`
}

// CompareStat is one side of one row: the median of the per-step samples
// and, with 6 or more, its 95% interval.
type CompareStat struct {
	N        int      `json:"n"`
	MedianUS float64  `json:"median_us"`
	MedianNS float64  `json:"median_ns"`
	LoNS     *float64 `json:"ci_lo_ns"`
	HiNS     *float64 `json:"ci_hi_ns"`
}

// CompareTest is the significance of one row.
type CompareTest struct {
	// Method is exact, normal or "too few" (fewer than 4 steps on a side:
	// no test, the practical gate alone decides, marked).
	Method string   `json:"method"`
	P      *float64 `json:"p"`
	// Q is the Benjamini-Hochberg adjusted p across the stage's kernel
	// rows (kernel rows only).
	Q           *float64 `json:"q,omitempty"`
	Significant bool     `json:"significant"`
}

// CompareMetric is one step-summary row.
type CompareMetric struct {
	Metric string `json:"metric"`
	Unit   string `json:"unit"` // ns or count
	// Statistic is what Base, Candidate and the delta are of: StatMedian.
	Statistic string      `json:"statistic"`
	Base      CompareStat `json:"base"`
	Candidate CompareStat `json:"candidate"`
	DeltaNS   float64     `json:"delta_ns"`
	DeltaPct  *float64    `json:"delta_pct"`
	Test      CompareTest `json:"test"`
	Verdict   string      `json:"verdict"` // regression | improvement | ""
}

// CompareDecomp is one part of the step-time delta: per-step means, exact
// nanoseconds apportioned so that the parts add up to the step-time delta.
type CompareDecomp struct {
	Part      string `json:"part"` // family:<f> | overlap | idle:<cause> | idle
	BaseNS    int64  `json:"base_ns"`
	CandNS    int64  `json:"candidate_ns"`
	DeltaNS   int64  `json:"delta_ns"`
	Component string `json:"component"`
}

// CompareKernel is one kernel-table row.
type CompareKernel struct {
	Bucket         string      `json:"bucket"`
	Kernel         string      `json:"kernel"`
	BaseKernel     string      `json:"base_kernel,omitempty"` // renamed rows
	Family         string      `json:"family"`
	Site           string      `json:"site,omitempty"`
	Base           CompareStat `json:"base"`
	Candidate      CompareStat `json:"candidate"`
	BaseLaunches   int64       `json:"base_launches"`
	CandLaunches   int64       `json:"candidate_launches"`
	BaseLaunchStep float64     `json:"base_launches_per_step"`
	CandLaunchStep float64     `json:"candidate_launches_per_step"`
	BaseMeanNS     float64     `json:"base_mean_launch_ns"`
	CandMeanNS     float64     `json:"candidate_mean_launch_ns"`
	BaseSharePct   float64     `json:"base_share_pct"`
	CandSharePct   float64     `json:"candidate_share_pct"`
	DeltaNS        float64     `json:"delta_ns"`
	DeltaPct       *float64    `json:"delta_pct"`
	Test           CompareTest `json:"test"`
	Verdict        string      `json:"verdict"`
	// IncludesWaits marks a communication kernel: its time includes
	// waiting for other ranks. CommGate says whether a change beyond the
	// thresholds gated: only when exposed communication or step time
	// moved the same way too ("" when the row is within the thresholds).
	IncludesWaits   bool   `json:"includes_waits"`
	CommGate        string `json:"comm_gate,omitempty"`
	baseHidden      float64
	candHidden      float64
	baseHasOverlap  bool
	candHasOverlap  bool
	baseSample      []float64
	candSample      []float64
	baseSite, cSite string
}

// CompareOverlap is a kernel whose hidden ratio moved by more than 10 points.
type CompareOverlap struct {
	Kernel        string  `json:"kernel"`
	BaseHiddenPct float64 `json:"base_hidden_pct"`
	CandHiddenPct float64 `json:"candidate_hidden_pct"`
	DeltaPoints   float64 `json:"delta_points"`
}

// CompareFusion is a catalog entry whose status changed between the runs.
type CompareFusion struct {
	ID         string   `json:"id"`
	Pattern    string   `json:"pattern"`
	BaseStatus []string `json:"base_status"`
	CandStatus []string `json:"candidate_status"`
	Change     string   `json:"change"` // switched off | now fused | appeared | vanished | changed
	Switch     string   `json:"switch,omitempty"`
	Evidence   []string `json:"evidence"`
}

// CompareCommOverlap is one rank's communication hidden under
// computation in a stage, as a % of its communication time (null: no
// communication on that side).
type CompareCommOverlap struct {
	Rank        int64    `json:"rank"`
	BasePct     *float64 `json:"base_pct"`
	CandPct     *float64 `json:"candidate_pct"`
	BaseCommNS  int64    `json:"base_comm_ns"`
	CandCommNS  int64    `json:"candidate_comm_ns"`
	DeltaPoints *float64 `json:"delta_points"`
}

// commOverlapRows pairs the two sides' rows of a stage by rank.
func commOverlapRows(stage string, base, cand *queries.CompareSide) []CompareCommOverlap {
	byRank := map[int64]*CompareCommOverlap{}
	var ranks []int64
	row := func(rank int64) *CompareCommOverlap {
		if byRank[rank] == nil {
			byRank[rank] = &CompareCommOverlap{Rank: rank}
			ranks = append(ranks, rank)
		}
		return byRank[rank]
	}
	pct := func(v sql.NullFloat64) *float64 {
		if !v.Valid {
			return nil
		}
		x := v.Float64
		return &x
	}
	for _, c := range base.CommOverlap {
		if c.Stage == stage {
			r := row(c.Rank)
			r.BasePct, r.BaseCommNS = pct(c.OverlapPct), c.CommNS
		}
	}
	for _, c := range cand.CommOverlap {
		if c.Stage == stage {
			r := row(c.Rank)
			r.CandPct, r.CandCommNS = pct(c.OverlapPct), c.CommNS
		}
	}
	slices.Sort(ranks)
	out := []CompareCommOverlap{}
	for _, rk := range ranks {
		r := byRank[rk]
		if r.BasePct == nil && r.CandPct == nil {
			continue // no communication on either side
		}
		if r.BasePct != nil && r.CandPct != nil {
			d := *r.CandPct - *r.BasePct
			r.DeltaPoints = &d
		}
		out = append(out, *r)
	}
	return out
}

// CompareRankRow is one rank's step time (with --rank all).
type CompareRankRow struct {
	Rank   int64         `json:"rank"`
	Metric CompareMetric `json:"step_time"`
}

// CompareStage is one stage's comparison.
type CompareStage struct {
	Stage     string `json:"stage"`
	BaseSteps int    `json:"base_steps"`
	CandSteps int    `json:"candidate_steps"`
	// Absent names the side without steps in the stage (SideBase or
	// SideCandidate): a comparability failure, nothing is compared.
	Absent        string          `json:"absent,omitempty"`
	TooFew        bool            `json:"too_few_steps"`
	PerWindow     bool            `json:"per_window"`
	Summary       []CompareMetric `json:"summary"`
	Decomposition []CompareDecomp `json:"decomposition"`
	// StepDeltaNS is the step-time delta the decomposition adds up to, of
	// the statistic DeltaStatistic names (StatMean); the step summary's
	// deltas are of the median per step (CompareMetric.Statistic).
	StepDeltaNS    int64            `json:"step_delta_ns"`
	DeltaStatistic string           `json:"step_delta_statistic"`
	Kernels        []CompareKernel  `json:"kernels"`
	Overlap        []CompareOverlap `json:"overlap_changes"`
	Fusions        []CompareFusion  `json:"fusion_changes"`
	Ranks          []CompareRankRow `json:"ranks,omitempty"`
	// CommOverlap is communication hidden under computation per rank on
	// both sides (sqllib/comm.sql): one figure per side over the stage,
	// not a per-step sample, so it is shown, not tested.
	CommOverlap   []CompareCommOverlap `json:"comm_overlap"`
	BaseStraggler *int64               `json:"base_straggler_rank,omitempty"`
	CandStraggler *int64               `json:"candidate_straggler_rank,omitempty"`
}

// CompareVerdict is the outcome and the rows that decided it.
type CompareVerdict struct {
	Verdict string   `json:"verdict"`
	Rows    []string `json:"rows"`
	// Untested says a deciding stage had too few steps to test: the
	// practical gate alone decided (AllowUntested).
	Untested bool `json:"untested"`
	// CannotDecide says, one line per stage, why a stage could not be
	// decided: steps on one side only, or too few steps to test.
	CannotDecide []string `json:"cannot_decide"`
	// Below names the rows that changed significantly but stayed within
	// the thresholds (or, communication kernels, were not gated): what
	// "no regression" means was seen.
	Below []string `json:"below_thresholds"`
}

// Decision is what a CI gate does with a verdict.
type Decision int

// Decisions; cmd maps them to exit statuses 0, 1 and 3.
const (
	Pass Decision = iota
	CannotDecide
	Regression
)

// Decide is the gate's decision: with failOnRegression a regression
// verdict fails (Regression) and a verdict that cannot be decided is
// CannotDecide; strict makes the latter CannotDecide too. Otherwise Pass.
// why is the one line to print for CannotDecide.
func (r *CompareReport) Decide(failOnRegression, strict bool) (d Decision, why string) {
	v := r.Verdict
	switch {
	case failOnRegression && v.Verdict == VerdictRegression:
		return Regression, ""
	case (failOnRegression || strict) && len(v.CannotDecide) > 0:
		return CannotDecide, "cannot decide: " + strings.Join(v.CannotDecide, "; ")
	}
	return Pass, ""
}

func nsStat(xs []float64) CompareStat {
	s := stats.Summarize(xs, 0.95)
	st := CompareStat{N: s.N, MedianNS: s.Median, MedianUS: s.Median / 1000}
	if s.N == 0 {
		st.MedianNS, st.MedianUS = 0, 0
	}
	if s.HasCI {
		lo, hi := s.Lo, s.Hi
		st.LoNS, st.HiNS = &lo, &hi
	}
	return st
}

func test(a, b []float64, alpha float64) CompareTest {
	u := stats.MannWhitney(a, b)
	t := CompareTest{Method: string(u.Method)}
	if u.Tested() {
		p := u.P
		t.P = &p
		t.Significant = p <= alpha
	}
	return t
}

func deltaPct(base, cand float64) *float64 {
	if base == 0 {
		return nil
	}
	v := (cand - base) / base * 100
	return &v
}

func i64p(v int64) *int64 { return &v }

// stageKey identifies a sample: one step of one trace of one rank.
type stepKey struct {
	rank, trace, step int64
}

// NewCompare builds the comparison of two sides.
func NewCompare(base, cand *queries.CompareSide, o CompareOptions) *CompareReport {
	r := &CompareReport{Base: compareRun(base), Candidate: compareRun(cand), Mismatches: []string{}, Notes: []string{},
		Gates: CompareGates{Alpha: o.Alpha, ThresholdPct: o.ThresholdPct, KernelThresholdPct: o.KernelThreshold,
			MinDeltaUS: o.MinDeltaNS / 1000, KernelMinSharePct: o.MinSharePct, AllowUntested: o.AllowUntested}}
	if !o.RankAll {
		r.Rank = i64p(o.Rank)
	}
	stages := map[string]bool{}
	for _, s := range base.Steps {
		stages[s.Stage] = true
	}
	for _, s := range cand.Steps {
		stages[s.Stage] = true
	}
	var order []string
	for s := range stages {
		if o.Stage == "" || s == o.Stage {
			order = append(order, s)
		}
	}
	slices.SortFunc(order, func(a, b string) int { return cmp.Or(cmp.Compare(StageOrder(a), StageOrder(b)), cmp.Compare(a, b)) })
	perWindow := false
	for _, st := range order {
		cs := compareStage(st, base, cand, o)
		perWindow = perWindow || cs.PerWindow
		r.Stages = append(r.Stages, cs)
	}
	r.Normalisation = "per step: each sample is one step's value (runs capture different numbers of steps, so window sums never compare); medians per side"
	if !o.KeepEdges {
		r.Normalisation += "; the first and last step of a trace with more than four are left out (cut by the profiler)"
	}
	if perWindow {
		r.Normalisation += "; a trace without step evidence is one sample (per window)"
	}
	r.Mismatches = mismatches(r.Base, r.Candidate)
	r.Verdict = verdict(r.Stages, r.Base.Label, r.Candidate.Label, o.AllowUntested)
	return r
}

// StageOrder sorts stages: prefill, decode, mixed, unknown, then others.
func StageOrder(s string) int {
	switch s {
	case vocab.Prefill:
		return 0
	case vocab.Decode:
		return 1
	case vocab.Mixed:
		return 2
	case vocab.StageUnknown:
		return 3
	}
	return 4
}

func compareRun(s *queries.CompareSide) CompareRun {
	run := s.Run
	c := CompareRun{Label: run.Label, Framework: run.Framework, Model: run.Model, GPUs: run.GPUs, Tags: run.Tags,
		Steps: map[string]int{}, BatchSizes: map[string]*int{}, Tokens: map[string]*int{}, StepSource: []string{}}
	c.Parallel = Parallel{TP: optInt(run.TP), DP: optInt(run.DP), EP: optInt(run.EP), PP: optInt(run.PP)}
	if run.CUDAGraph.Valid {
		b := run.CUDAGraph.Bool
		c.CUDAGraph = &b
	}
	bs, tok := map[string][]float64{}, map[string][]float64{}
	sources := map[string]bool{}
	for _, st := range s.Steps {
		c.Steps[st.Stage]++
		sources[st.Source] = true
		if st.BatchSize.Valid {
			bs[st.Stage] = append(bs[st.Stage], float64(st.BatchSize.Int64))
		}
		if st.Tokens.Valid {
			tok[st.Stage] = append(tok[st.Stage], float64(st.Tokens.Int64))
		}
	}
	for st := range c.Steps {
		c.BatchSizes[st], c.Tokens[st] = medianInt(bs[st]), medianInt(tok[st])
	}
	for src := range sources {
		c.StepSource = append(c.StepSource, src)
	}
	slices.Sort(c.StepSource)
	return c
}

func optInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

func medianInt(xs []float64) *int {
	if len(xs) == 0 {
		return nil
	}
	v := int(math.Round(stats.Median(xs)))
	return &v
}

func mismatches(a, b CompareRun) []string {
	var out []string
	diff := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s differs: %s (base) vs %s (candidate)", what, x, y))
		}
	}
	diff("GPU", orUnknown(strings.Join(a.GPUs, ", ")), orUnknown(strings.Join(b.GPUs, ", ")))
	diff("framework", a.Framework, b.Framework)
	diff("model", a.Model, b.Model)
	for _, p := range []struct {
		name string
		x, y *int64
	}{{"TP size", a.Parallel.TP, b.Parallel.TP}, {"DP size", a.Parallel.DP, b.Parallel.DP},
		{"EP size", a.Parallel.EP, b.Parallel.EP}, {"PP size", a.Parallel.PP, b.Parallel.PP}} {
		diff(p.name, fmtOptInt(p.x), fmtOptInt(p.y))
	}
	diff("CUDA graphs", optBool(a.CUDAGraph), optBool(b.CUDAGraph))
	var stagesSeen []string
	for st := range a.Steps {
		if _, ok := b.Steps[st]; ok {
			stagesSeen = append(stagesSeen, st)
		}
	}
	slices.Sort(stagesSeen)
	for _, st := range stagesSeen {
		diff(vocab.StageName(st)+" batch size per step (median)", optIntp(a.BatchSizes[st]), optIntp(b.BatchSizes[st]))
		diff(vocab.StageName(st)+" tokens per step (median)", optIntp(a.Tokens[st]), optIntp(b.Tokens[st]))
	}
	if out == nil {
		out = []string{}
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func fmtOptInt(v *int64) string {
	if v == nil {
		return "unknown"
	}
	return fmt.Sprint(*v)
}

func optIntp(v *int) string {
	if v == nil {
		return "unknown"
	}
	return fmt.Sprint(*v)
}

func optBool(v *bool) string {
	if v == nil {
		return "unknown"
	}
	if *v {
		return "on"
	}
	return "off"
}

// metric names of the step summary.
var summaryMetrics = []struct {
	name, unit string
	get        func(queries.CompareStepsRow) float64
}{
	{"step time", UnitNS, func(s queries.CompareStepsRow) float64 { return float64(s.WindowNS) }},
	{"kernel time", UnitNS, func(s queries.CompareStepsRow) float64 { return float64(s.KernelNS) }},
	{"GPU busy", UnitNS, func(s queries.CompareStepsRow) float64 { return float64(s.BusyNS) }},
	{"idle", UnitNS, func(s queries.CompareStepsRow) float64 { return float64(s.IdleNS) }},
	{"exposed communication", UnitNS, func(s queries.CompareStepsRow) float64 { return float64(s.ExposedCommNS) }},
	{"launches", UnitCount, func(s queries.CompareStepsRow) float64 { return float64(s.Kernels) }},
}

func stepsOf(s *queries.CompareSide, stage string, rank *int64) []queries.CompareStepsRow {
	var out []queries.CompareStepsRow
	for _, st := range s.Steps {
		if st.Stage == stage && (rank == nil || st.Rank == *rank) {
			out = append(out, st)
		}
	}
	return out
}

func metric(name, unit string, a, b []float64, o CompareOptions, gated bool) CompareMetric {
	m := CompareMetric{Metric: name, Unit: unit, Statistic: StatMedian, Base: nsStat(a), Candidate: nsStat(b), Test: test(a, b, o.Alpha)}
	m.DeltaNS = m.Candidate.MedianNS - m.Base.MedianNS
	m.DeltaPct = deltaPct(m.Base.MedianNS, m.Candidate.MedianNS)
	if gated && m.DeltaPct != nil && (m.Test.Significant || (o.AllowUntested && m.Test.Method == string(stats.TooFew))) {
		switch {
		case *m.DeltaPct > o.ThresholdPct:
			m.Verdict = VerdictRegression
		case *m.DeltaPct < -o.ThresholdPct:
			m.Verdict = VerdictImprovement
		}
	}
	return m
}

func compareStage(stage string, base, cand *queries.CompareSide, o CompareOptions) CompareStage {
	cs := CompareStage{Stage: stage, Kernels: []CompareKernel{}, Overlap: []CompareOverlap{}, Fusions: []CompareFusion{},
		Decomposition: []CompareDecomp{}, CommOverlap: []CompareCommOverlap{}}
	bAll, cAll := stepsOf(base, stage, nil), stepsOf(cand, stage, nil)
	bSteps, cSteps := stepSamples(bAll), stepSamples(cAll)
	cs.BaseSteps, cs.CandSteps = len(bSteps), len(cSteps)
	switch {
	case len(bSteps) == 0:
		cs.Absent = SideBase
	case len(cSteps) == 0:
		cs.Absent = SideCandidate
	}
	if cs.Absent != "" {
		// Nothing to compare: no deltas, no gate (a stage that did not
		// land is not -100% faster).
		cs.Summary = []CompareMetric{}
		return cs
	}
	cs.TooFew = cs.BaseSteps < stats.MinSamples || cs.CandSteps < stats.MinSamples
	for _, s := range append(slices.Clone(bSteps), cSteps...) {
		if s.Source == "window" {
			cs.PerWindow = true
		}
	}
	for _, m := range summaryMetrics {
		a, b := make([]float64, len(bSteps)), make([]float64, len(cSteps))
		for i, s := range bSteps {
			a[i] = m.get(s)
		}
		for i, s := range cSteps {
			b[i] = m.get(s)
		}
		gated := m.name == "step time" || m.name == "GPU busy"
		cs.Summary = append(cs.Summary, metric(m.name, m.unit, a, b, o, gated))
	}
	if o.RankAll {
		ranks := map[int64]bool{}
		for _, s := range append(slices.Clone(bAll), cAll...) {
			ranks[s.Rank] = true
		}
		var rs []int64
		for r := range ranks {
			rs = append(rs, r)
		}
		slices.Sort(rs)
		var bWorst, cWorst *int64
		var bMax, cMax float64
		for _, rk := range rs {
			var a, b []float64
			for _, s := range stepsOf(base, stage, &rk) {
				a = append(a, float64(s.WindowNS))
			}
			for _, s := range stepsOf(cand, stage, &rk) {
				b = append(b, float64(s.WindowNS))
			}
			m := metric("step time", UnitNS, a, b, o, false)
			cs.Ranks = append(cs.Ranks, CompareRankRow{Rank: rk, Metric: m})
			if len(a) > 0 && (bWorst == nil || m.Base.MedianNS > bMax) {
				bWorst, bMax = i64p(rk), m.Base.MedianNS
			}
			if len(b) > 0 && (cWorst == nil || m.Candidate.MedianNS > cMax) {
				cWorst, cMax = i64p(rk), m.Candidate.MedianNS
			}
		}
		cs.BaseStraggler, cs.CandStraggler = bWorst, cWorst
	}
	cs.Decomposition, cs.StepDeltaNS = decomposition(decompParts(stage, base, bSteps), decompParts(stage, cand, cSteps))
	cs.DeltaStatistic = StatMean
	cs.Kernels = kernelRows(stage, base, cand, bSteps, cSteps, len(bAll), len(cAll), cs.Summary, o)
	cs.Overlap = overlapChanges(cs.Kernels)
	cs.Fusions = fusionChanges(stage, base, cand)
	cs.CommOverlap = commOverlapRows(stage, base, cand)
	return cs
}

// stepSamples are a stage's samples, one per step, from its rows (one
// per rank and step, sorted by rank, trace and step as compare_steps.sql
// returns them). With one rank they are its rows. With several, the i-th
// step of each rank is one step (TP ranks record the same forward steps:
// their values are not independent samples), and its sample is the row of
// the rank that sets it, the one with the largest GPU window (ties: the
// lowest rank). Every figure of that step (step time, busy, kernel time,
// idle, exposed communication, launches, each kernel's time and the
// decomposition's parts) is then that rank's.
func stepSamples(rows []queries.CompareStepsRow) []queries.CompareStepsRow {
	var ranks []int64
	byRank := map[int64][]queries.CompareStepsRow{}
	for _, r := range rows {
		if _, ok := byRank[r.Rank]; !ok {
			ranks = append(ranks, r.Rank)
		}
		byRank[r.Rank] = append(byRank[r.Rank], r)
	}
	if len(ranks) <= 1 {
		return rows
	}
	slices.Sort(ranks)
	var out []queries.CompareStepsRow
	for i := 0; ; i++ {
		var best *queries.CompareStepsRow
		for _, rk := range ranks {
			if rs := byRank[rk]; i < len(rs) && (best == nil || rs[i].WindowNS > best.WindowNS) {
				best = &rs[i]
			}
		}
		if best == nil {
			return out
		}
		out = append(out, *best)
	}
}

// Statistics a delta is of, as the report names them.
const (
	StatMedian = "median per step"
	StatMean   = "mean per step"
)

// decompSide is one side's step time in parts, summed over its samples:
// family kernel time per family, overlap (busy minus the summed kernel
// time: minus the time kernels run at once) and idle (window minus busy)
// by cause (sqllib/idle.sql; a step whose causes do not add up to its
// idle time, one over several devices, counts whole as idle), which add
// up to the summed step time exactly.
type decompSide struct {
	steps  int
	stepNS int64
	parts  map[string]int64 // family:<f>, overlap, idle
}

// Parts of the decomposition (CompareDecomp.Part; a family is "family:F",
// an idle cause "idle:C", C one of queries.IdleCauseNames; PartIdle is
// idle time not split by cause).
const (
	PartOverlap    = "overlap"
	PartIdle       = "idle"
	PartIdlePrefix = "idle:"
)

// idleCauseComponents name the idle causes in the decomposition.
var idleCauseComponents = map[string]string{"host_bound": "idle: host-bound (the GPU waited for the launch)",
	"launch_latency": "idle: launch latency", "sync": "idle: sync (a blocking call on the launching thread)",
	"graph_internal": "idle: graph-internal", "other": "idle: other"}

// decompParts sums one side's parts over its samples (the steps of
// stepSamples): each kernel's time in a sample's step (rank, trace, step)
// counts towards its family (compare_kernels.sql's family of the name).
func decompParts(stage string, s *queries.CompareSide, samples []queries.CompareStepsRow) decompSide {
	family := map[string]string{}
	for _, k := range s.Kernels {
		if k.Stage == stage {
			family[k.Kernel] = k.Family
		}
	}
	perStep := map[stepKey]map[string]int64{}
	for _, k := range s.KernelSteps {
		if k.Stage != stage {
			continue
		}
		key := stepKey{k.Rank, k.TraceID, k.Step}
		if perStep[key] == nil {
			perStep[key] = map[string]int64{}
		}
		f := family[k.Kernel]
		if f == "" {
			f = "unclassified"
		}
		perStep[key]["family:"+f] += k.NS
	}
	d := decompSide{steps: len(samples), parts: map[string]int64{}}
	for _, st := range samples {
		var kernel int64
		for part, ns := range perStep[stepKey{st.Rank, st.TraceID, st.Step}] {
			d.parts[part] += ns
			kernel += ns
		}
		d.parts[PartOverlap] += st.BusyNS - kernel
		if st.IdleCauses.Valid {
			// a cause that never occurs on either side is no row
			for i, ns := range st.IdleCauses.ByCause() {
				if ns != 0 {
					d.parts[PartIdlePrefix+queries.IdleCauseNames[i]] += ns
				}
			}
		} else if idle := st.WindowNS - st.BusyNS; idle != 0 {
			d.parts[PartIdle] += idle
		}
		d.stepNS += st.WindowNS
	}
	return d
}

// decomposition apportions the mean step-time delta (of the mean step
// time per side, not the summary's median) over the parts (families,
// overlap, idle) in whole nanoseconds: each part's delta of per-step
// means, rounded by the largest-remainder rule so that the parts add up
// exactly to the rounded mean step-time delta.
func decomposition(b, c decompSide) ([]CompareDecomp, int64) {
	mean := func(d decompSide, ns int64) float64 {
		if d.steps == 0 {
			return 0
		}
		return float64(ns) / float64(d.steps)
	}
	keys := []string{}
	for k := range b.parts {
		keys = append(keys, k)
	}
	for k := range c.parts {
		if _, ok := b.parts[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	total := int64(math.Round(mean(c, c.stepNS) - mean(b, b.stepNS)))
	deltas := make([]float64, len(keys))
	for i, k := range keys {
		deltas[i] = mean(c, c.parts[k]) - mean(b, b.parts[k])
	}
	ints := apportion(deltas, total)
	out := make([]CompareDecomp, 0, len(keys))
	for i, k := range keys {
		comp := k
		if f, ok := strings.CutPrefix(k, "family:"); ok {
			comp = f + " kernels"
		} else if k == PartOverlap {
			comp = "overlap (minus time kernels run concurrently)"
		} else if k == PartIdle {
			comp = "idle inside the step (not split by cause: several devices)"
		} else if c, ok := strings.CutPrefix(k, PartIdlePrefix); ok {
			comp = idleCauseComponents[c]
		}
		out = append(out, CompareDecomp{Part: k, BaseNS: int64(math.Round(mean(b, b.parts[k]))), CandNS: int64(math.Round(mean(c, c.parts[k]))),
			DeltaNS: ints[i], Component: comp})
	}
	slices.SortStableFunc(out, func(a, b CompareDecomp) int {
		return cmp.Or(cmp.Compare(abs64(b.DeltaNS), abs64(a.DeltaNS)), cmp.Compare(a.Part, b.Part))
	})
	return out, total
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// apportion rounds xs to integers summing to total (largest remainder:
// floor each, then hand the remaining units to the largest fractional
// parts, ties by position). xs must sum to total up to rounding.
func apportion(xs []float64, total int64) []int64 {
	out := make([]int64, len(xs))
	var sum int64
	type frac struct {
		i int
		f float64
	}
	fr := make([]frac, len(xs))
	for i, x := range xs {
		out[i] = int64(math.Floor(x))
		sum += out[i]
		fr[i] = frac{i, x - math.Floor(x)}
	}
	rest := total - sum
	slices.SortStableFunc(fr, func(a, b frac) int { return cmp.Compare(b.f, a.f) })
	for k := 0; rest > 0 && len(fr) > 0; k, rest = (k+1)%len(fr), rest-1 {
		out[fr[k].i]++
	}
	for k := len(fr) - 1; rest < 0 && len(fr) > 0; k, rest = (k-1+len(fr))%len(fr), rest+1 {
		out[fr[k].i]--
	}
	return out
}

// kernelRows builds the kernel table: per-step samples (0 in a step where
// the kernel did not run; the kernel's time on the rank that sets the
// step, stepSamples), buckets, tests with Benjamini-Hochberg across the
// stage's rows, and the kernel gate. bRankSteps and cRankSteps count the
// steps of every rank: launches per step are per rank and step.
func kernelRows(stage string, base, cand *queries.CompareSide, bSteps, cSteps []queries.CompareStepsRow, bRankSteps, cRankSteps int,
	summary []CompareMetric, o CompareOptions) []CompareKernel {
	type side struct {
		info    queries.CompareKernelsRow
		perStep map[stepKey]float64
	}
	collect := func(s *queries.CompareSide) map[string]*side {
		m := map[string]*side{}
		for _, k := range s.Kernels {
			if k.Stage == stage {
				m[k.Kernel] = &side{info: k, perStep: map[stepKey]float64{}}
			}
		}
		for _, k := range s.KernelSteps {
			if k.Stage != stage {
				continue
			}
			if e := m[k.Kernel]; e != nil {
				e.perStep[stepKey{k.Rank, k.TraceID, k.Step}] += float64(k.NS)
			}
		}
		return m
	}
	bm, cm := collect(base), collect(cand)
	sample := func(e *side, steps []queries.CompareStepsRow) []float64 {
		out := make([]float64, len(steps))
		if e == nil {
			return out
		}
		for i, s := range steps {
			out[i] = e.perStep[stepKey{s.Rank, s.TraceID, s.Step}]
		}
		return out
	}
	mk := func(name, baseName string, b, c *side) CompareKernel {
		k := CompareKernel{Kernel: name, BaseKernel: baseName}
		k.baseSample, k.candSample = sample(b, bSteps), sample(c, cSteps)
		k.Base, k.Candidate = nsStat(k.baseSample), nsStat(k.candSample)
		if b != nil {
			k.Family, k.BaseLaunches = b.info.Family, b.info.Launches
			k.BaseSharePct = share(b.info.NS, b.info.StageNS)
			if b.info.Launches > 0 {
				k.BaseMeanNS = float64(b.info.NS) / float64(b.info.Launches)
			}
			k.baseSite = b.info.Site.String
			if b.info.NS > 0 {
				k.baseHidden, k.baseHasOverlap = float64(b.info.HiddenNS)/float64(b.info.NS), true
			}
		}
		if c != nil {
			k.Family, k.CandLaunches = c.info.Family, c.info.Launches
			k.CandSharePct = share(c.info.NS, c.info.StageNS)
			if c.info.Launches > 0 {
				k.CandMeanNS = float64(c.info.NS) / float64(c.info.Launches)
			}
			k.cSite = c.info.Site.String
			if c.info.NS > 0 {
				k.candHidden, k.candHasOverlap = float64(c.info.HiddenNS)/float64(c.info.NS), true
			}
		}
		k.Site = k.cSite
		if k.Site == "" {
			k.Site = k.baseSite
		}
		if bRankSteps > 0 {
			k.BaseLaunchStep = float64(k.BaseLaunches) / float64(bRankSteps)
		}
		if cRankSteps > 0 {
			k.CandLaunchStep = float64(k.CandLaunches) / float64(cRankSteps)
		}
		k.DeltaNS = k.Candidate.MedianNS - k.Base.MedianNS
		k.DeltaPct = deltaPct(k.Base.MedianNS, k.Candidate.MedianNS)
		if b == nil || c == nil {
			k.DeltaPct = nil // new or gone: not a -100% row
		}
		return k
	}
	var rows []CompareKernel
	var gone, added []string
	for name, b := range bm {
		if c := cm[name]; c != nil {
			k := mk(name, "", b, c)
			k.Bucket = BucketSame
			rows = append(rows, k)
		} else {
			gone = append(gone, name)
		}
	}
	for name := range cm {
		if bm[name] == nil {
			added = append(added, name)
		}
	}
	slices.Sort(gone)
	slices.Sort(added)
	// Renamed: a gone and a new kernel of the same family and Python site
	// whose launches per step are within 10% of each other, paired greedily
	// by name order.
	used := map[string]bool{}
	for _, g := range gone {
		b := bm[g]
		if !b.info.Site.Valid {
			continue
		}
		bl := float64(b.info.Launches) / float64(max(1, bRankSteps))
		for _, n := range added {
			c := cm[n]
			if used[n] || !c.info.Site.Valid || c.info.Site.String != b.info.Site.String || c.info.Family != b.info.Family {
				continue
			}
			cl := float64(c.info.Launches) / float64(max(1, cRankSteps))
			if math.Abs(cl-bl) > 0.1*math.Max(bl, cl) {
				continue
			}
			used[n], used[g] = true, true
			k := mk(n, g, b, c)
			k.Bucket = BucketRenamed
			rows = append(rows, k)
			break
		}
	}
	for _, g := range gone {
		if !used[g] {
			k := mk(g, "", bm[g], nil)
			k.Bucket = BucketGone
			rows = append(rows, k)
		}
	}
	for _, n := range added {
		if !used[n] {
			k := mk(n, "", nil, cm[n])
			k.Bucket = BucketNew
			rows = append(rows, k)
		}
	}
	// Tests, then Benjamini-Hochberg across the stage's tested rows.
	ps := make([]float64, len(rows))
	for i := range rows {
		rows[i].Test = test(rows[i].baseSample, rows[i].candSample, o.Alpha)
		ps[i] = math.NaN()
		if rows[i].Test.P != nil {
			ps[i] = *rows[i].Test.P
		}
	}
	qs := stats.BenjaminiHochberg(ps)
	for i := range rows {
		t := &rows[i].Test
		if !math.IsNaN(qs[i]) {
			q := qs[i]
			t.Q = &q
			t.Significant = q <= o.Alpha
		}
		k := &rows[i]
		if !(t.Significant || (o.AllowUntested && t.Method == string(stats.TooFew))) {
			continue
		}
		if math.Max(k.BaseSharePct, k.CandSharePct) < o.MinSharePct || math.Abs(k.DeltaNS) <= o.MinDeltaNS {
			continue
		}
		grow := math.Inf(1)
		if k.DeltaPct != nil {
			grow = *k.DeltaPct
		} else if k.DeltaNS < 0 {
			grow = math.Inf(-1)
		} else if k.DeltaNS == 0 {
			grow = 0
		}
		switch {
		case grow > o.KernelThreshold:
			k.Verdict = VerdictRegression
		case grow < -o.KernelThreshold:
			k.Verdict = VerdictImprovement
		}
	}
	for i := range rows {
		commGate(&rows[i], summary, o)
	}
	slices.SortStableFunc(rows, func(a, b CompareKernel) int {
		return cmp.Or(cmp.Compare(math.Abs(b.DeltaNS), math.Abs(a.DeltaNS)), cmp.Compare(a.Kernel, b.Kernel))
	})
	return rows
}

// FamilyCommunication is the family of communication kernels (NCCL and
// friends), whose time includes waiting for the other ranks.
const FamilyCommunication = "communication"

// commGate applies the communication rule to a kernel row: its time
// includes waiting for other ranks (a fast rank waits for a slow one), so
// a change beyond the thresholds gates only when the stage's exposed
// communication or its step time moved the same way too (significantly,
// or untested under AllowUntested); else the row is held and says why.
func commGate(k *CompareKernel, summary []CompareMetric, o CompareOptions) {
	if k.Family != FamilyCommunication {
		return
	}
	k.IncludesWaits = true
	if k.Verdict == "" {
		return
	}
	dir, word := 1.0, "rose"
	if k.Verdict == VerdictImprovement {
		dir, word = -1, "fell"
	}
	moved := func(metric string) bool {
		for _, m := range summary {
			if m.Metric == metric && (m.Test.Significant || (o.AllowUntested && m.Test.Method == string(stats.TooFew))) &&
				m.DeltaNS*dir > 0 {
				return true
			}
		}
		return false
	}
	switch {
	case moved("exposed communication"):
		k.CommGate = "gated: exposed communication " + word + " too"
	case moved("step time"):
		k.CommGate = "gated: step time " + word + " too"
	default:
		k.CommGate = fmt.Sprintf("not gated: its time includes waiting for other ranks, and neither exposed communication nor step time %s", word)
		k.Verdict = ""
	}
}

func share(ns, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(ns) * 100 / float64(total)
}

// overlapChanges lists kernels present in both runs whose hidden ratio
// (time under another stream / kernel time) moved by more than 10 points.
func overlapChanges(rows []CompareKernel) []CompareOverlap {
	out := []CompareOverlap{}
	for _, k := range rows {
		if !k.baseHasOverlap || !k.candHasOverlap {
			continue
		}
		d := (k.candHidden - k.baseHidden) * 100
		if math.Abs(d) <= 10 {
			continue
		}
		out = append(out, CompareOverlap{Kernel: k.Kernel, BaseHiddenPct: k.baseHidden * 100, CandHiddenPct: k.candHidden * 100,
			DeltaPoints: d})
	}
	slices.SortStableFunc(out, func(a, b CompareOverlap) int {
		return cmp.Or(cmp.Compare(math.Abs(b.DeltaPoints), math.Abs(a.DeltaPoints)), cmp.Compare(a.Kernel, b.Kernel))
	})
	return out
}

// fusionChanges joins both runs' fuse-pattern rows of the stage by catalog
// entry and keeps the entries whose statuses differ.
func fusionChanges(stage string, base, cand *queries.CompareSide) []CompareFusion {
	type entry struct {
		pattern, sw string
		status      []string
		evidence    []string
	}
	collect := func(rows []queries.FusionMatchesRow) map[string]*entry {
		m := map[string]*entry{}
		for _, f := range rows {
			if f.Stage != stage {
				continue
			}
			e := m[f.ID]
			if e == nil {
				e = &entry{pattern: f.Pattern, sw: f.Switch}
				m[f.ID] = e
			}
			if !slices.Contains(e.status, f.Status) {
				e.status = append(e.status, f.Status)
			}
			e.evidence = append(e.evidence, f.Evidence...)
		}
		for _, e := range m {
			slices.Sort(e.status)
		}
		return m
	}
	bm, cm := collect(base.Fusions), collect(cand.Fusions)
	ids := map[string]bool{}
	for id := range bm {
		ids[id] = true
	}
	for id := range cm {
		ids[id] = true
	}
	out := []CompareFusion{}
	for id := range ids {
		b, c := bm[id], cm[id]
		f := CompareFusion{ID: id, BaseStatus: []string{}, CandStatus: []string{}, Evidence: []string{}}
		if b != nil {
			f.Pattern, f.Switch, f.BaseStatus = b.pattern, b.sw, b.status
		}
		if c != nil {
			f.Pattern, f.CandStatus, f.Evidence = c.pattern, c.status, c.evidence
			if f.Switch == "" {
				f.Switch = c.sw
			}
		} else if b != nil {
			f.Evidence = b.evidence
		}
		if slices.Equal(f.BaseStatus, f.CandStatus) {
			continue
		}
		bf := slices.Contains(f.BaseStatus, queries.FusionAlreadyFused)
		cf := slices.Contains(f.CandStatus, queries.FusionAlreadyFused)
		co := slices.Contains(f.CandStatus, queries.FusionOpportunity)
		bo := slices.Contains(f.BaseStatus, queries.FusionOpportunity)
		switch {
		case bf && !cf && co:
			f.Change = "switched off"
		case !bf && cf && bo:
			f.Change = "now fused"
		case b == nil:
			f.Change = "appeared"
		case c == nil:
			f.Change = "vanished"
		default:
			f.Change = "changed"
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b CompareFusion) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// verdict applies section 4: any regression row makes a regression; else
// a stage that cannot be decided (steps on one side only, too few steps
// to test) makes the verdict "cannot decide"; else any improvement row an
// improvement; else no significant change.
func verdict(stages []CompareStage, baseLabel, candLabel string, allowUntested bool) CompareVerdict {
	var reg, imp []string
	undecided, below := []string{}, []string{}
	untestedReg, untestedImp := false, false
	for _, st := range stages {
		name := vocab.StageName(st.Stage)
		switch {
		case st.Absent == SideCandidate:
			undecided = append(undecided, fmt.Sprintf("%s has no steps in the candidate, %s (%d in the base, %s)",
				name, candLabel, st.BaseSteps, baseLabel))
		case st.Absent == SideBase:
			undecided = append(undecided, fmt.Sprintf("%s has no steps in the base, %s (%d in the candidate, %s)",
				name, baseLabel, st.CandSteps, candLabel))
		case st.TooFew && !allowUntested:
			undecided = append(undecided, fmt.Sprintf("%s %d vs %d steps; at least %d a side", name, st.BaseSteps, st.CandSteps,
				stats.MinSamples))
		}
		for _, m := range st.Summary {
			row := fmt.Sprintf("%s %s %s", name, m.Metric, signedPct(m.DeltaPct))
			switch m.Verdict {
			case VerdictRegression:
				reg = append(reg, row)
				untestedReg = untestedReg || st.TooFew
			case VerdictImprovement:
				imp = append(imp, row)
				untestedImp = untestedImp || st.TooFew
			default:
				if m.Test.Significant && (m.Metric == "step time" || m.Metric == "GPU busy") {
					below = append(below, row)
				}
			}
		}
		for _, k := range st.Kernels {
			row := fmt.Sprintf("%s kernel %s %s", name, k.Kernel, signedPct(k.DeltaPct))
			switch k.Bucket {
			case BucketNew:
				row = fmt.Sprintf("%s new kernel %s", name, k.Kernel)
			case BucketGone:
				row = fmt.Sprintf("%s gone kernel %s", name, k.Kernel)
			}
			if k.CommGate != "" {
				row += " (communication, " + k.CommGate + ")"
			}
			switch k.Verdict {
			case VerdictRegression:
				reg = append(reg, row)
				untestedReg = untestedReg || st.TooFew
			case VerdictImprovement:
				imp = append(imp, row)
				untestedImp = untestedImp || st.TooFew
			default:
				if k.Test.Significant || k.CommGate != "" {
					below = append(below, row)
				}
			}
		}
	}
	v := CompareVerdict{Verdict: VerdictNoChange, Rows: []string{}, CannotDecide: undecided, Below: below}
	switch {
	case len(reg) > 0:
		v.Verdict, v.Rows, v.Untested = VerdictRegression, reg, untestedReg
	case len(undecided) > 0:
		v.Verdict = VerdictCannotDecide
	case len(imp) > 0:
		v.Verdict, v.Rows, v.Untested = VerdictImprovement, imp, untestedImp
	case len(below) > 0:
		v.Verdict = VerdictNoRegression
	}
	return v
}

func signedPct(p *float64) string {
	if p == nil {
		return "(new)"
	}
	return fmt.Sprintf("%+.1f%%", *p)
}

// Units of a summary row.
const (
	UnitNS    = "ns"
	UnitCount = "count"
)

// countStat is one side of a count row in JSON: a count has no µs and no
// ns, so its figures are median, ci_lo and ci_hi.
type countStat struct {
	N      int      `json:"n"`
	Median float64  `json:"median"`
	Lo     *float64 `json:"ci_lo"`
	Hi     *float64 `json:"ci_hi"`
}

// countMetric is a count row (launches per step) in JSON: the delta is
// "delta", in the row's unit.
type countMetric struct {
	Metric    string      `json:"metric"`
	Unit      string      `json:"unit"`
	Statistic string      `json:"statistic"`
	Base      countStat   `json:"base"`
	Candidate countStat   `json:"candidate"`
	Delta     float64     `json:"delta"`
	DeltaPct  *float64    `json:"delta_pct"`
	Test      CompareTest `json:"test"`
	Verdict   string      `json:"verdict"`
}

// MarshalJSON writes a count row's figures in its unit (median, ci_lo,
// ci_hi, delta: 1219 launches is "median": 1219, not "median_us": 1.219);
// a time row as it is (median_us with exact *_ns).
func (m CompareMetric) MarshalJSON() ([]byte, error) {
	type plain CompareMetric
	if m.Unit != UnitCount {
		return json.Marshal(plain(m))
	}
	side := func(s CompareStat) countStat { return countStat{N: s.N, Median: s.MedianNS, Lo: s.LoNS, Hi: s.HiNS} }
	return json.Marshal(countMetric{Metric: m.Metric, Unit: m.Unit, Statistic: m.Statistic, Base: side(m.Base),
		Candidate: side(m.Candidate), Delta: m.DeltaNS, DeltaPct: m.DeltaPct, Test: m.Test, Verdict: m.Verdict})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *CompareMetric) UnmarshalJSON(b []byte) error {
	type plain CompareMetric
	var unit struct {
		Unit string `json:"unit"`
	}
	if err := json.Unmarshal(b, &unit); err != nil {
		return err
	}
	if unit.Unit != UnitCount {
		return json.Unmarshal(b, (*plain)(m))
	}
	var c countMetric
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	side := func(s countStat) CompareStat {
		return CompareStat{N: s.N, MedianNS: s.Median, MedianUS: s.Median / 1000, LoNS: s.Lo, HiNS: s.Hi}
	}
	*m = CompareMetric{Metric: c.Metric, Unit: c.Unit, Statistic: c.Statistic, Base: side(c.Base), Candidate: side(c.Candidate),
		DeltaNS: c.Delta, DeltaPct: c.DeltaPct, Test: c.Test, Verdict: c.Verdict}
	return nil
}
