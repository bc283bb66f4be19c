package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/kernelname"
	"github.com/tracehouse/tracehouse/stats"
	"github.com/tracehouse/tracehouse/vocab"
)

// The text/markdown and CSV views of a comparison (analysis.CompareReport).

// compareTextRows is how many kernel rows text and markdown show besides
// the rows that decided the verdict and the new/gone/renamed ones.
const compareTextRows = 20

func fmtUSf(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 1, 64) }

func fmtSignedUS(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 1, 64) }

// fmtStat is "median ±spread%" (the wider side of the 95% interval), or the
// median alone when there is no interval.
func fmtStat(s analysis.CompareStat, unit string) string {
	v := fmtUSf(s.MedianNS)
	if unit == analysis.UnitCount {
		v = strconv.FormatFloat(s.MedianNS, 'f', -1, 64)
	}
	if s.LoNS != nil && s.MedianNS != 0 {
		spread := math.Max(s.MedianNS-*s.LoNS, *s.HiNS-s.MedianNS) / math.Abs(s.MedianNS) * 100
		v += fmt.Sprintf(" ±%.0f%%", spread)
	}
	return v
}

func fmtDeltaPct(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", *p)
}

// fmtTest is the p column: the p-value (adjusted for kernel rows) when
// significant, "~" when not, "too few" when untested.
func fmtTest(t analysis.CompareTest) string {
	if t.P == nil {
		return "too few"
	}
	p := *t.P
	if t.Q != nil {
		p = *t.Q
	}
	v := fmt.Sprintf("p=%.3f", p)
	if p < 0.001 {
		v = "p<0.001"
	}
	if !t.Significant {
		return "~ (" + v + ")"
	}
	return v
}

func runLine(r *analysis.CompareRun) string {
	var parts []string
	parts = append(parts, r.Label, r.Framework, r.Model, "GPU "+orUnknown(strings.Join(r.GPUs, ", ")))
	par := fmt.Sprintf("TP %s DP %s EP %s PP %s", fmtOptInt(r.Parallel.TP), fmtOptInt(r.Parallel.DP), fmtOptInt(r.Parallel.EP), fmtOptInt(r.Parallel.PP))
	parts = append(parts, par, "CUDA graphs "+optBool(r.CUDAGraph))
	if len(r.Tags) > 0 {
		parts = append(parts, "tags "+strings.Join(r.Tags, ","))
	}
	var steps []string
	for _, st := range vocab.Stages {
		if n, ok := r.Steps[st]; ok {
			s := fmt.Sprintf("%s %d", vocab.StageName(st), n)
			if b := r.BatchSizes[st]; b != nil {
				s += fmt.Sprintf(" (bs %d)", *b)
			}
			steps = append(steps, s)
		}
	}
	if len(steps) > 0 {
		parts = append(parts, "steps "+strings.Join(steps, ", ")+" from "+strings.Join(r.StepSource, ","))
	}
	return strings.Join(parts, " · ")
}

// CompareDoc renders the comparison for the text or markdown format.
func CompareDoc(r *analysis.CompareReport, f Format) Doc {
	d := Doc{JSON: r}
	d.Blocks = append(d.Blocks, &Heading{Level: 1, Text: compareTitle(r)}, compareHeadLines(r))
	for _, st := range r.Stages {
		if st.Absent == "" {
			d.Blocks = append(d.Blocks, compareStageBlocks(st, f == Text, r.Gates.AllowUntested)...)
		}
	}
	d.Blocks = append(d.Blocks, &Heading{Level: 2, Text: "Verdict"}, Lines{CompareVerdictLine(r)})
	return d
}

// compareTitle is the comparison's heading.
func compareTitle(r *analysis.CompareReport) string {
	return fmt.Sprintf("Compare %s -> %s", r.Base.Label, r.Candidate.Label)
}

// compareHeadLines are the header: both runs, the rank, the normalisation and
// the comparability warnings.
func compareHeadLines(r *analysis.CompareReport) Lines {
	head := Lines{"base:      " + runLine(&r.Base), "candidate: " + runLine(&r.Candidate)}
	if r.Rank != nil {
		head = append(head, fmt.Sprintf("rank:      %d", *r.Rank))
	} else {
		head = append(head, "rank:      every rank: the i-th step of each rank is one step (one sample), its every figure (step time, busy, "+
			"kernels, decomposition) that of the rank that sets it (largest GPU window); each rank's own step time below")
	}
	head = append(head, "normalisation: "+r.Normalisation, gatesLine(r.Gates))
	if len(r.Mismatches) == 0 {
		head = append(head, "comparability: same GPU, framework, model, parallel sizes, CUDA-graph setting, batch size and tokens per step")
	} else {
		for _, m := range r.Mismatches {
			head = append(head, "warning: "+m)
		}
	}
	for _, st := range r.Stages {
		switch st.Absent {
		case analysis.SideCandidate:
			head = append(head, fmt.Sprintf("not comparable: %s has no steps in the candidate (%d in the base): not compared",
				vocab.StageName(st.Stage), st.BaseSteps))
		case analysis.SideBase:
			head = append(head, fmt.Sprintf("not comparable: %s has no steps in the base (%d in the candidate): not compared",
				vocab.StageName(st.Stage), st.CandSteps))
		}
	}
	return append(head, r.Notes...)
}

// stageTitle is a stage section's heading.
func stageTitle(st analysis.CompareStage, allowUntested bool) string {
	title := fmt.Sprintf("%s: %d vs %d steps", vocab.StageName(st.Stage), st.BaseSteps, st.CandSteps)
	switch {
	case st.TooFew && allowUntested:
		title += " (too few steps to test: --allow-untested, the thresholds alone decide)"
	case st.TooFew:
		title += fmt.Sprintf(" (too few steps to test, at least %d a side: cannot decide)", stats.MinSamples)
	}
	return title
}

// stageBlocks are one stage's section: its heading (level 2) and tables.
// Text tables show kernel labels on a terminal (text) and whole names
// with --wide and in markdown.
func compareStageBlocks(st analysis.CompareStage, text, allowUntested bool) []any {
	var blocks []any
	blocks = append(blocks, &Heading{Level: 2, Text: stageTitle(st, allowUntested)})
	sum := &Table{Name: "summary", Columns: []Column{{Name: "Metric", Keep: true}, {Name: "Base/step", Right: true},
		{Name: "Candidate/step", Short: "Cand/step", Right: true}, {Name: "Delta", Right: true}, {Name: "Delta %", Right: true}, {Name: "p", Keep: true}, {Name: "Gate", Keep: true}}}
	for _, m := range st.Summary {
		unit := " µs"
		delta := fmtSignedUS(m.DeltaNS)
		if m.Unit == analysis.UnitCount {
			unit, delta = "", strconv.FormatFloat(m.DeltaNS, 'f', -1, 64)
		}
		sum.Rows = append(sum.Rows, []string{m.Metric + unit, fmtStat(m.Base, m.Unit), fmtStat(m.Candidate, m.Unit), delta,
			fmtDeltaPct(m.DeltaPct), fmtTest(m.Test), m.Verdict})
	}
	blocks = append(blocks, &Heading{Level: 3, Text: "Step summary (median per step: both sides and the delta; ±: 95% interval)"}, sum)
	if len(st.Ranks) > 0 {
		rt := &Table{Name: "ranks", Columns: []Column{{Name: "Rank", Right: true}, {Name: "Base step µs", Right: true},
			{Name: "Candidate step µs", Short: "Cand step µs", Right: true}, {Name: "Delta %", Right: true}, {Name: "p", Keep: true}}}
		for _, rr := range st.Ranks {
			rt.Rows = append(rt.Rows, []string{strconv.FormatInt(rr.Rank, 10), fmtStat(rr.Metric.Base, "ns"),
				fmtStat(rr.Metric.Candidate, "ns"), fmtDeltaPct(rr.Metric.DeltaPct), fmtTest(rr.Metric.Test)})
		}
		blocks = append(blocks, &Heading{Level: 3, Text: "Ranks (each rank's own steps: step time, median per step)"}, rt)
		var l Lines
		if st.BaseStraggler != nil && st.CandStraggler != nil {
			l = append(l, fmt.Sprintf("straggler (slowest median step, sets the step time): rank %d in base, rank %d in candidate",
				*st.BaseStraggler, *st.CandStraggler))
		}
		blocks = append(blocks, l)
	}
	if l := compareCommLine(st); l != "" {
		blocks = append(blocks, Lines{l})
	}
	// A part's name wraps in its column on a narrow terminal: its
	// figures are never cut.
	dt := &Table{Name: "decomposition", Columns: []Column{{Name: "Part", Wrap: true}, {Name: "Base µs/step", Short: "Base µs", Right: true},
		{Name: "Candidate µs/step", Short: "Cand µs", Right: true}, {Name: "Delta µs", Right: true}}}
	for _, p := range st.Decomposition {
		dt.Rows = append(dt.Rows, []string{p.Component, fmtUS3(p.BaseNS), fmtUS3(p.CandNS), fmtUS3(p.DeltaNS)})
	}
	dt.Rows = append(dt.Rows, []string{"= step time, " + st.DeltaStatistic, "", "", fmtUS3(st.StepDeltaNS)})
	blocks = append(blocks, &Heading{Level: 3, Text: decompTitle(st)}, dt)

	// Text: kernel labels (kernelname.Labels over the table) on a
	// terminal, the per-launch columns under the row when they do not fit.
	kt := &Table{Name: "kernels", Columns: []Column{{Name: "Bucket", Keep: true}, {Name: "Kernel", Kernel: true}, {Name: "Family", Keep: true, Detail: 1},
		{Name: "Base µs/step", Short: "Base µs", Right: true}, {Name: "Cand µs/step", Short: "Cand µs", Right: true}, {Name: "Delta µs", Right: true},
		{Name: "Delta %", Right: true}, {Name: "p (BH)", Keep: true}, {Name: "Launches/step", Right: true, Detail: 1}, {Name: "µs/launch", Right: true, Detail: 1},
		{Name: "Share %", Right: true, Detail: 1}, {Name: "Gate", Keep: true}}}
	var knames []string
	for _, k := range st.Kernels {
		knames = append(knames, k.Kernel)
		if k.Bucket == analysis.BucketRenamed {
			knames = append(knames, k.BaseKernel)
		}
	}
	label := map[string]string{}
	for i, l := range kernelname.Labels(knames) {
		label[knames[i]] = l
	}
	hidden := 0
	waits := false
	for i, k := range st.Kernels {
		if i >= compareTextRows && k.Verdict == "" && k.Bucket == analysis.BucketSame {
			hidden++
			continue
		}
		kn, kl := k.Kernel, label[k.Kernel]
		if k.Bucket == analysis.BucketRenamed {
			kn, kl = k.BaseKernel+" -> "+k.Kernel, label[k.BaseKernel]+" -> "+label[k.Kernel]
		}
		launches := fmtLaunches(k.BaseLaunchStep, k.CandLaunchStep)
		mean := fmtPair(k.BaseMeanNS/1e3, k.CandMeanNS/1e3)
		sh := fmtPair(k.BaseSharePct, k.CandSharePct)
		gate := k.Verdict
		if strings.HasPrefix(k.CommGate, "not gated") {
			gate = "not gated (waits)"
		}
		delta := fmtDeltaPct(k.DeltaPct)
		if k.Bucket == analysis.BucketNew || k.Bucket == analysis.BucketGone {
			delta = k.Bucket
		}
		row := []string{k.Bucket, kn, k.Family, fmtUSf(k.Base.MedianNS), fmtUSf(k.Candidate.MedianNS),
			fmtSignedUS(k.DeltaNS), delta, fmtTest(k.Test), launches, mean, sh, gate}
		kt.Rows = append(kt.Rows, row)
		if text {
			narrow := slices.Clone(row)
			narrow[1] = kl
			kt.Narrow = append(kt.Narrow, narrow)
		}
		waits = waits || k.IncludesWaits
	}
	blocks = append(blocks, &Heading{Level: 3, Text: "Kernels (time per step: median per side; launches, µs per launch and share: base -> candidate)"}, kt)
	var notes Lines
	if hidden > 0 {
		notes = append(notes, fmt.Sprintf("%d more unchanged-bucket rows (smaller deltas): --format json or csv lists every kernel", hidden))
	}
	if waits {
		notes = append(notes, "communication kernels: their time includes waiting for other ranks; a change beyond the thresholds "+
			"gates only when exposed communication or step time moved the same way too")
	}
	if len(notes) > 0 {
		blocks = append(blocks, notes)
	}
	if len(st.Overlap) > 0 {
		ot := &Table{Name: "overlap", Columns: []Column{{Name: "Kernel", Kernel: true}, {Name: "Base hidden %", Right: true},
			{Name: "Candidate hidden %", Short: "Cand hidden %", Right: true}, {Name: "Delta (points)", Right: true}}}
		var onames []string
		for _, o := range st.Overlap {
			onames = append(onames, o.Kernel)
		}
		olabels := kernelname.Labels(onames)
		for i, o := range st.Overlap {
			row := []string{o.Kernel, fmtPct(o.BaseHiddenPct), fmtPct(o.CandHiddenPct), fmt.Sprintf("%+.1f", o.DeltaPoints)}
			ot.Rows = append(ot.Rows, row)
			if text {
				ot.Narrow = append(ot.Narrow, append([]string{olabels[i]}, row[1:]...))
			}
		}
		blocks = append(blocks, &Heading{Level: 3, Text: "Overlap changes (time hidden under other streams moved by more than 10 points)"}, ot)
	}
	if len(st.Fusions) > 0 {
		ft := &Table{Name: "fusions", Columns: []Column{{Name: "Entry"}, {Name: "Base", Keep: true}, {Name: "Candidate", Keep: true}, {Name: "Change", Keep: true}, {Name: "Switch"}}}
		for _, fu := range st.Fusions {
			ft.Rows = append(ft.Rows, []string{fu.Pattern + " (" + fu.ID + ")", orDash(strings.Join(fu.BaseStatus, ", ")),
				orDash(strings.Join(fu.CandStatus, ", ")), fu.Change, orDash(fu.Switch)})
		}
		blocks = append(blocks, &Heading{Level: 3, Text: "Fusion changes (catalog entries whose status differs)"}, ft)
	}
	return blocks
}

// decompTitle heads the decomposition: which delta it adds up to, and the
// summary's other one.
func decompTitle(st analysis.CompareStage) string {
	t := fmt.Sprintf("Where the step-time delta went (%s: the rows add up exactly to the mean step-time delta, %+.3f µs", st.DeltaStatistic,
		float64(st.StepDeltaNS)/1e3)
	for _, m := range st.Summary {
		if m.Metric == "step time" {
			t += fmt.Sprintf("; the summary's delta is of the %s, %+.1f µs", m.Statistic, m.DeltaNS/1e3)
		}
	}
	return t + ")"
}

// CompareVerdictLine is the one line a CI log shows.
func CompareVerdictLine(r *analysis.CompareReport) string {
	v := r.Verdict
	s := "verdict: " + v.Verdict
	if len(v.Rows) > 0 {
		s += ": " + strings.Join(v.Rows, "; ")
	}
	if n := len(v.Below); n > 0 {
		// "no regression: 12 significant changes below the thresholds
		// (...)": what was seen and not gated, never "no change".
		sep, what := ": ", "significant changes"
		if v.Verdict != analysis.VerdictNoRegression {
			sep = "; also "
		}
		if n == 1 {
			what = "significant change"
		}
		s += fmt.Sprintf("%s%d %s below the thresholds (%s): %s", sep, n, what, shortGates(r.Gates), listSome(v.Below, 5))
	}
	if len(v.CannotDecide) > 0 {
		if v.Verdict != analysis.VerdictCannotDecide {
			s += "; cannot decide"
		}
		s += ": " + strings.Join(v.CannotDecide, "; ")
	}
	if v.Untested {
		s += " [too few steps to test: --allow-untested, the thresholds alone decided]"
	}
	return s
}

// shortGates are the thresholds in a few words: "5% step/busy time; 10%
// and 1 µs kernels".
func shortGates(g analysis.CompareGates) string {
	return fmt.Sprintf("%g%% step/busy time; %g%% and %g µs kernels", g.ThresholdPct, g.KernelThresholdPct, g.MinDeltaUS)
}

// gatesLine states the thresholds in force (every format prints them).
func gatesLine(g analysis.CompareGates) string {
	s := fmt.Sprintf("thresholds: a regression is significant (alpha %g; Benjamini-Hochberg across a stage's kernels) and "+
		"large: step or busy time per step beyond %g%%, or a kernel with >= %g%% share beyond %g%% and %g µs per step; "+
		"a communication kernel's time includes waits: it gates only when exposed communication or step time moved too",
		g.Alpha, g.ThresholdPct, g.KernelMinSharePct, g.KernelThresholdPct, g.MinDeltaUS)
	if g.AllowUntested {
		s += "; --allow-untested: the thresholds alone decide a stage with too few steps"
	}
	return s
}

func fmtUS3(ns int64) string { return strconv.FormatFloat(float64(ns)/1e3, 'f', 3, 64) }

func fmtLaunches(a, b float64) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	if a == b {
		return f(a)
	}
	return fmt.Sprintf("%s -> %s", strconv.FormatFloat(a, 'f', 2, 64), strconv.FormatFloat(b, 'f', 2, 64))
}

func fmtPair(a, b float64) string {
	return fmt.Sprintf("%s -> %s", strconv.FormatFloat(a, 'f', 1, 64), strconv.FormatFloat(b, 'f', 1, 64))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// CompareCSVTables are the comparison as machine-readable tables (--out DIR):
// compare.summary, compare.decomposition, compare.kernels, compare.overlap,
// compare.fusions, one row per stage and row, exact nanoseconds.
func CompareCSVTables(r *analysis.CompareReport) []*Table {
	ff := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	fp := func(v *float64) string {
		if v == nil {
			return ""
		}
		return ff(*v)
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	sum := &Table{Name: "compare.summary", Columns: cols("stage", "metric", "unit", "statistic", "base_steps", "candidate_steps",
		"base_median", "base_ci_lo", "base_ci_hi", "candidate_median", "candidate_ci_lo", "candidate_ci_hi",
		"delta", "delta_pct", "method", "p", "significant", "verdict")}
	dec := &Table{Name: "compare.decomposition", Columns: cols("stage", "part", "statistic", "base_ns", "candidate_ns", "delta_ns")}
	ker := &Table{Name: "compare.kernels", Columns: cols("stage", "bucket", "kernel", "base_kernel", "family", "site",
		"base_median_ns", "candidate_median_ns", "delta_ns", "delta_pct", "method", "p", "q", "significant",
		"base_launches", "candidate_launches", "base_launches_per_step", "candidate_launches_per_step",
		"base_mean_launch_ns", "candidate_mean_launch_ns", "base_share_pct", "candidate_share_pct", "verdict", "includes_waits", "comm_gate")}
	ov := &Table{Name: "compare.overlap", Columns: cols("stage", "kernel", "base_hidden_pct", "candidate_hidden_pct", "delta_points")}
	fu := &Table{Name: "compare.fusions", Columns: cols("stage", "id", "pattern", "base_status", "candidate_status", "change", "switch")}
	g := r.Gates
	vt := &Table{Name: "compare.verdict", Columns: cols("verdict", "rows", "cannot_decide", "below_thresholds", "untested", "alpha",
		"threshold_pct", "kernel_threshold_pct", "min_delta_us", "kernel_min_share_pct", "allow_untested")}
	vt.Rows = append(vt.Rows, []string{r.Verdict.Verdict, strings.Join(r.Verdict.Rows, "; "), strings.Join(r.Verdict.CannotDecide, "; "),
		strings.Join(r.Verdict.Below, "; "), strconv.FormatBool(r.Verdict.Untested), ff(g.Alpha), ff(g.ThresholdPct),
		ff(g.KernelThresholdPct), ff(g.MinDeltaUS), ff(g.KernelMinSharePct), strconv.FormatBool(g.AllowUntested)})
	for _, st := range r.Stages {
		for _, m := range st.Summary {
			sum.Rows = append(sum.Rows, []string{st.Stage, m.Metric, m.Unit, m.Statistic, strconv.Itoa(st.BaseSteps), strconv.Itoa(st.CandSteps),
				ff(m.Base.MedianNS), fp(m.Base.LoNS), fp(m.Base.HiNS), ff(m.Candidate.MedianNS), fp(m.Candidate.LoNS), fp(m.Candidate.HiNS),
				ff(m.DeltaNS), fp(m.DeltaPct), m.Test.Method, fp(m.Test.P), strconv.FormatBool(m.Test.Significant), m.Verdict})
		}
		for _, p := range st.Decomposition {
			dec.Rows = append(dec.Rows, []string{st.Stage, p.Part, st.DeltaStatistic, i64(p.BaseNS), i64(p.CandNS), i64(p.DeltaNS)})
		}
		if st.Absent == "" {
			dec.Rows = append(dec.Rows, []string{st.Stage, "step_time", st.DeltaStatistic, "", "", i64(st.StepDeltaNS)})
		}
		for _, k := range st.Kernels {
			ker.Rows = append(ker.Rows, []string{st.Stage, k.Bucket, k.Kernel, k.BaseKernel, k.Family, k.Site,
				ff(k.Base.MedianNS), ff(k.Candidate.MedianNS), ff(k.DeltaNS), fp(k.DeltaPct), k.Test.Method, fp(k.Test.P), fp(k.Test.Q),
				strconv.FormatBool(k.Test.Significant), i64(k.BaseLaunches), i64(k.CandLaunches), ff(k.BaseLaunchStep), ff(k.CandLaunchStep),
				ff(k.BaseMeanNS), ff(k.CandMeanNS), ff(k.BaseSharePct), ff(k.CandSharePct), k.Verdict,
				strconv.FormatBool(k.IncludesWaits), k.CommGate})
		}
		for _, o := range st.Overlap {
			ov.Rows = append(ov.Rows, []string{st.Stage, o.Kernel, ff(o.BaseHiddenPct), ff(o.CandHiddenPct), ff(o.DeltaPoints)})
		}
		for _, f := range st.Fusions {
			fu.Rows = append(fu.Rows, []string{st.Stage, f.ID, f.Pattern, strings.Join(f.BaseStatus, "; "), strings.Join(f.CandStatus, "; "), f.Change, f.Switch})
		}
	}
	return []*Table{sum, dec, ker, ov, fu, vt}
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

func optBool(v *bool) string {
	if v == nil {
		return "unknown"
	}
	if *v {
		return "on"
	}
	return "off"
}

// compareCommLine is communication hidden under computation per rank on
// both sides; "" when neither side communicates.
func compareCommLine(st analysis.CompareStage) string {
	var parts []string
	pct := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmtPct(*v)
	}
	for _, c := range st.CommOverlap {
		p := fmt.Sprintf("rank %d %s -> %s", c.Rank, pct(c.BasePct), pct(c.CandPct))
		if c.DeltaPoints != nil {
			p += fmt.Sprintf(" (%+.1f points)", *c.DeltaPoints)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return "communication hidden under computation (HTA's comm-comp overlap, of communication time): " + strings.Join(parts, ", ")
}
