package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/stats"
	"github.com/tracehouse/tracehouse/vocab"
)

// The history (README "History: when did it get slow"): one row per run with the
// median per step of one series, its interval, launches per step and
// share, and the change points. The per-step samples, launches per step
// and shares come from history_steps.sql; medians, intervals and the
// change-point rule from the stats package.

// History series kinds.
const (
	SeriesKernel = "kernel"
	SeriesFamily = "family"
	SeriesMetric = "metric"
)

// Why a run is absent from a series.
const (
	AbsentNoSteps  = "no steps"
	AbsentNoKernel = "no matching kernel"
)

// Change directions.
const (
	ChangeSlower = "slower"
	ChangeFaster = "faster"
)

// HistoryOptions describe the series and the rule that marks it.
type HistoryOptions struct {
	Series    string // SeriesKernel, SeriesFamily or SeriesMetric
	Match     string // the pattern, family or metric
	Rank      int64
	Stage     string   // "" = every stage
	Tags      []string // the runs' tag filter
	By        string   // the tag ordering the runs; "" = ingest time
	KeepEdges bool
	Rule      stats.ChangeRule
}

// HistoryRunInfo is one selected run, in series order.
type HistoryRunInfo struct {
	RunID      int64
	Label      string
	IngestedAt time.Time
	Tags       []string
	By         string // the --by tag's value
}

// HistoryReport is a whole history. JSON names are a contract (a test
// pins them); times are µs numbers with exact *_ns beside them.
type HistoryReport struct {
	Series  string   `json:"series"`
	Match   string   `json:"match"`
	What    string   `json:"what"`
	ShareOf string   `json:"share_of"`
	Rank    int64    `json:"rank"`
	Tags    []string `json:"tags"`
	By      string   `json:"by"`
	// KeepEdges says the first and last step of each trace count too.
	KeepEdges bool           `json:"keep_edges"`
	Rule      HistoryRule    `json:"rule"`
	Stages    []HistoryStage `json:"stages"`
	// Newest is the last selected run of the order (what a CI gate asks
	// about); "" when none was selected.
	Newest string   `json:"newest"`
	Notes  []string `json:"notes"`
}

// HistoryRule echoes the change-point rule's parameters.
type HistoryRule struct {
	Window       int     `json:"window"`
	MinHistory   int     `json:"min_history"`
	NoiseK       float64 `json:"noise_k"`
	MinChangePct float64 `json:"min_change_pct"`
	Text         string  `json:"text"`
}

// HistoryStage is one stage's series.
type HistoryStage struct {
	Stage string         `json:"stage"`
	Runs  []HistoryPoint `json:"runs"`
	// ChangePoints are the marked runs' labels, in series order.
	ChangePoints []string `json:"change_points"`
	// FirstSlower is the first run of the first lasting shift to slower:
	// when it got slow (a one-run spike is not one; see Spikes).
	FirstSlower *string `json:"first_slower"`
	// Spikes are change points the next run did not continue (it is back
	// at the level before): reported apart, never "when it got slow".
	Spikes []string `json:"spikes"`
	// Gate holds the newest run against the level before the last lasting
	// shift to slower; nil when there is none (or the newest is absent).
	Gate *HistoryGate `json:"gate"`
	// Missing are selected runs with no steps in this stage on the rank
	// (each is also a point of Runs, absent).
	Missing []string `json:"missing"`
}

// HistoryPoint is one run of a series.
type HistoryPoint struct {
	Order      int      `json:"order"` // 1, 2, ... in series order
	Label      string   `json:"label"`
	IngestedAt string   `json:"ingested_at"`
	By         string   `json:"by_value"`
	Tags       []string `json:"tags"`
	Steps      int      `json:"steps"`
	// Absent says why the run has no value in the series (AbsentNoSteps,
	// AbsentNoKernel): a gap, never 0 and never a change point; "" when
	// it has one.
	Absent          string   `json:"absent"`
	MedianUS        *float64 `json:"median_us"` // null when absent
	MedianNS        *float64 `json:"median_ns"`
	LoNS            *float64 `json:"ci_lo_ns"`
	HiNS            *float64 `json:"ci_hi_ns"`
	LaunchesPerStep float64  `json:"launches_per_step"`
	SharePct        *float64 `json:"share_pct"`
	// ReferenceNS is the rolling median of the previous runs, ThresholdNS
	// the departure that counts; null for the first runs (untested).
	ReferenceNS *float64 `json:"reference_ns"`
	NoiseNS     *float64 `json:"noise_ns"`
	ThresholdNS *float64 `json:"threshold_ns"`
	DeltaPct    *float64 `json:"delta_pct"` // against ReferenceNS
	// Change is "slower" or "faster" at a change point, else "".
	Change string `json:"change"`
	// Spike marks a change point the next run did not continue.
	Spike bool `json:"spike"`
}

// HistoryGate is the level test of --fail-on-regression: the newest run
// fails while its median stays beyond the level before the last lasting
// shift to slower (the rolling median there) plus that change point's
// threshold, not only at the change point itself.
type HistoryGate struct {
	Shift       string  `json:"shift"` // the change point's run
	LevelNS     float64 `json:"level_ns"`
	ThresholdNS float64 `json:"threshold_ns"`
	NewestNS    float64 `json:"newest_ns"`
	Regressed   bool    `json:"regressed"`
}

// RuleText states the change-point rule r (for --help and the report).
func RuleText(r stats.ChangeRule) string {
	return fmt.Sprintf("a run is a change point when its median per step departs from the median of the previous %d runs "+
		"(after at least %d) by more than max(%g x 1.4826 x their median absolute deviation, %g%% of that median), "+
		"unless the run before departed the same way and this one is within that threshold of it "+
		"(a lasting shift is marked once, at its first run)", r.Window, r.MinHistory, r.K, r.MinChange*100)
}

// NewHistory builds the history of runs (in series order) from the
// per-step rows of history_steps.sql.
func NewHistory(runs []HistoryRunInfo, rows []queries.HistoryStepsRow, o HistoryOptions) *HistoryReport {
	r := &HistoryReport{Series: o.Series, Match: o.Match, Rank: o.Rank, Tags: o.Tags, By: o.By, KeepEdges: o.KeepEdges, Notes: []string{},
		Stages: []HistoryStage{},
		Rule: HistoryRule{Window: o.Rule.Window, MinHistory: o.Rule.MinHistory, NoiseK: o.Rule.K,
			MinChangePct: o.Rule.MinChange * 100, Text: RuleText(o.Rule)}}
	if r.Tags == nil {
		r.Tags = []string{}
	}
	if len(runs) > 0 {
		r.Newest = runs[len(runs)-1].Label
	}
	switch o.Series {
	case SeriesKernel:
		r.What, r.ShareOf = fmt.Sprintf("time per step of the kernels matching %q", o.Match), "summed kernel time"
	case SeriesFamily:
		r.What, r.ShareOf = fmt.Sprintf("time per step of family %s", o.Match), "summed kernel time"
	default:
		r.What, r.ShareOf = metricTitle(o.Match)+" per step", "step time"
	}
	type key struct {
		run   int64
		stage string
	}
	samples := map[key][]queries.HistoryStepsRow{}
	stages := map[string]bool{}
	for _, row := range rows {
		k := key{row.RunID, row.Stage}
		samples[k] = append(samples[k], row)
		stages[row.Stage] = true
	}
	var order []string
	for s := range stages {
		order = append(order, s)
	}
	slices.SortFunc(order, func(a, b string) int { return cmp.Or(cmp.Compare(StageOrder(a), StageOrder(b)), cmp.Compare(a, b)) })
	for _, st := range order {
		hs := HistoryStage{Stage: st, Runs: []HistoryPoint{}, ChangePoints: []string{}, Missing: []string{}, Spikes: []string{}}
		// The change points are those of the series without its gaps:
		// present[i] is the point of the i-th value.
		var medians []float64
		var present []int
		for _, run := range runs {
			ss := samples[key{run.RunID, st}]
			p := HistoryPoint{Order: len(hs.Runs) + 1, Label: run.Label, IngestedAt: run.IngestedAt.Format("2006-01-02 15:04:05"),
				By: run.By, Tags: run.Tags, Steps: len(ss)}
			if p.Tags == nil {
				p.Tags = []string{}
			}
			var launches int64
			for _, s := range ss {
				launches += s.Launches
			}
			switch {
			case len(ss) == 0:
				hs.Missing = append(hs.Missing, run.Label)
				p.Absent = AbsentNoSteps
			case o.Series != SeriesMetric && launches == 0:
				// Not one matching kernel in the run's steps: a kernel
				// renamed or gone is not a kernel that got faster.
				p.Absent = AbsentNoKernel
			default:
				xs := make([]float64, len(ss))
				for i, s := range ss {
					xs[i] = float64(s.ValueNS)
				}
				sum := stats.Summarize(xs, 0.95)
				med, us := sum.Median, sum.Median/1e3
				p.MedianNS, p.MedianUS, p.LaunchesPerStep = &med, &us, ss[0].LaunchesPerStep
				if sum.HasCI {
					lo, hi := sum.Lo, sum.Hi
					p.LoNS, p.HiNS = &lo, &hi
				}
				if ss[0].SharePct.Valid {
					v := ss[0].SharePct.Float64
					p.SharePct = &v
				}
				medians = append(medians, med)
				present = append(present, len(hs.Runs))
			}
			hs.Runs = append(hs.Runs, p)
		}
		changes := stats.ChangePoints(medians, o.Rule)
		shift := -1 // the last slower change point that is not a spike
		for i, c := range changes {
			if !c.Tested {
				continue
			}
			p := &hs.Runs[present[i]]
			ref, noise, thr := c.Reference, c.Noise, c.Threshold
			p.ReferenceNS, p.NoiseNS, p.ThresholdNS = &ref, &noise, &thr
			p.DeltaPct = deltaPct(ref, *p.MedianNS)
			if !c.Mark {
				continue
			}
			p.Change = ChangeFaster
			if c.Departure > 0 {
				p.Change = ChangeSlower
			}
			hs.ChangePoints = append(hs.ChangePoints, p.Label)
			// A spike: the next run does not depart the same way (it is
			// back at the level before). The newest run's change cannot
			// be told yet: it counts as a shift.
			if i+1 < len(changes) && changes[i+1].Departure != c.Departure {
				p.Spike = true
				hs.Spikes = append(hs.Spikes, p.Label)
				continue
			}
			if p.Change == ChangeSlower {
				shift = i
				if hs.FirstSlower == nil {
					l := p.Label
					hs.FirstSlower = &l
				}
			}
		}
		if last := len(hs.Runs) - 1; shift >= 0 && last >= 0 && hs.Runs[last].Absent == "" {
			c := changes[shift]
			g := &HistoryGate{Shift: hs.Runs[present[shift]].Label, LevelNS: c.Reference, ThresholdNS: c.Threshold,
				NewestNS: *hs.Runs[last].MedianNS}
			g.Regressed = g.NewestNS > g.LevelNS+g.ThresholdNS
			hs.Gate = g
		}
		r.Stages = append(r.Stages, hs)
	}
	return r
}

// HasValues says whether any run has a value in the series (else the
// selection is empty: no step, or no matching kernel, anywhere).
func (r *HistoryReport) HasValues() bool {
	for _, st := range r.Stages {
		for _, p := range st.Runs {
			if p.Absent == "" {
				return true
			}
		}
	}
	return false
}

func metricTitle(m string) string {
	switch m {
	case queries.MetricStepTime:
		return "step time"
	case queries.MetricBusy:
		return "GPU busy time"
	case queries.MetricExposedComm:
		return "exposed communication"
	case queries.MetricIdle:
		return "GPU idle time"
	case queries.MetricIdleHostBound:
		return "host-bound idle time"
	case queries.MetricIdleLaunchLatency:
		return "launch-latency idle time"
	case queries.MetricIdleSync:
		return "sync idle time"
	case queries.MetricIdleGraphInternal:
		return "graph-internal idle time"
	case queries.MetricIdleOther:
		return "other idle time"
	}
	return m
}

// Regressed lists the stages where the newest selected run stays beyond
// the level before the last lasting shift to slower (HistoryGate): what
// --fail-on-regression fails on.
func (r *HistoryReport) Regressed() []string {
	var out []string
	for _, st := range r.Stages {
		if st.Gate != nil && st.Gate.Regressed {
			g := st.Gate
			out = append(out, fmt.Sprintf("%s (%.1f µs against the level before %s, %.1f µs + threshold %.1f µs)",
				vocab.StageName(st.Stage), g.NewestNS/1e3, g.Shift, g.LevelNS/1e3, g.ThresholdNS/1e3))
		}
	}
	return out
}

// Decide is the history gate: Regression when the newest run regressed in
// a stage (Regressed), else CannotDecide when the newest run is absent from
// a stage's series (a kernel renamed, a stage that did not land), else
// Pass; without failOnRegression always Pass. line says what was found
// (regression or gap), whatever the decision; "" when nothing.
func (r *HistoryReport) Decide(failOnRegression bool) (d Decision, line string) {
	if reg := r.Regressed(); len(reg) > 0 {
		line = fmt.Sprintf("regression: the newest run, %s, is slower in %s", r.Newest, strings.Join(reg, ", "))
		d = Regression
	} else {
		var gaps []string
		for _, st := range r.Stages {
			if n := len(st.Runs); n > 0 && st.Runs[n-1].Label == r.Newest && st.Runs[n-1].Absent != "" {
				gaps = append(gaps, fmt.Sprintf("%s (%s)", vocab.StageName(st.Stage), st.Runs[n-1].Absent))
			}
		}
		if len(gaps) > 0 {
			line = fmt.Sprintf("cannot decide: the newest run, %s, is absent from the series in %s", r.Newest, strings.Join(gaps, ", "))
			d = CannotDecide
		}
	}
	if !failOnRegression {
		d = Pass
	}
	return d, line
}
