package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/stats"
	"github.com/tracehouse/tracehouse/vocab"
)

// The history report (spec/compare.md section 6): one row per run with the
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
	// FirstSlower is the first run marked slower: when it got slow.
	FirstSlower *string `json:"first_slower"`
	// Missing are selected runs with no steps in this stage on the rank.
	Missing []string `json:"missing"`
}

// HistoryPoint is one run of a series.
type HistoryPoint struct {
	Order           int      `json:"order"` // 1, 2, ... in series order
	Label           string   `json:"label"`
	IngestedAt      string   `json:"ingested_at"`
	By              string   `json:"by_value"`
	Tags            []string `json:"tags"`
	Steps           int      `json:"steps"`
	MedianUS        float64  `json:"median_us"`
	MedianNS        float64  `json:"median_ns"`
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
	slices.SortFunc(order, func(a, b string) int { return cmp.Or(cmp.Compare(stageOrder(a), stageOrder(b)), cmp.Compare(a, b)) })
	for _, st := range order {
		hs := HistoryStage{Stage: st, Runs: []HistoryPoint{}, ChangePoints: []string{}, Missing: []string{}}
		var medians []float64
		for _, run := range runs {
			ss := samples[key{run.RunID, st}]
			if len(ss) == 0 {
				hs.Missing = append(hs.Missing, run.Label)
				continue
			}
			xs := make([]float64, len(ss))
			for i, s := range ss {
				xs[i] = float64(s.ValueNS)
			}
			sum := stats.Summarize(xs, 0.95)
			p := HistoryPoint{Order: len(hs.Runs) + 1, Label: run.Label, IngestedAt: run.IngestedAt.Format("2006-01-02 15:04:05"),
				By: run.By, Tags: run.Tags, Steps: sum.N, MedianNS: sum.Median, MedianUS: sum.Median / 1e3,
				LaunchesPerStep: ss[0].LaunchesPerStep}
			if p.Tags == nil {
				p.Tags = []string{}
			}
			if sum.HasCI {
				lo, hi := sum.Lo, sum.Hi
				p.LoNS, p.HiNS = &lo, &hi
			}
			if ss[0].SharePct.Valid {
				v := ss[0].SharePct.Float64
				p.SharePct = &v
			}
			hs.Runs = append(hs.Runs, p)
			medians = append(medians, sum.Median)
		}
		for i, c := range stats.ChangePoints(medians, o.Rule) {
			if !c.Tested {
				continue
			}
			p := &hs.Runs[i]
			ref, noise, thr := c.Reference, c.Noise, c.Threshold
			p.ReferenceNS, p.NoiseNS, p.ThresholdNS = &ref, &noise, &thr
			p.DeltaPct = deltaPct(ref, p.MedianNS)
			if c.Mark {
				p.Change = ChangeFaster
				if c.Departure > 0 {
					p.Change = ChangeSlower
				}
				hs.ChangePoints = append(hs.ChangePoints, p.Label)
				if p.Change == ChangeSlower && hs.FirstSlower == nil {
					l := p.Label
					hs.FirstSlower = &l
				}
			}
		}
		r.Stages = append(r.Stages, hs)
	}
	if o.Series != SeriesMetric && len(rows) > 0 {
		matched := false
		for _, row := range rows {
			matched = matched || row.Launches > 0
		}
		if !matched {
			r.Notes = append(r.Notes, "no kernel of the selected runs matches: every value is 0")
		}
	}
	return r
}

func metricTitle(m string) string {
	switch m {
	case queries.MetricStepTime:
		return "step time"
	case queries.MetricBusy:
		return "GPU busy time"
	case queries.MetricExposedComm:
		return "exposed communication"
	}
	return m
}

// Regressed lists the stages where the newest selected run is a change
// point to slower: what --fail-on-regression fails on.
func (r *HistoryReport) Regressed() []string {
	var out []string
	for _, st := range r.Stages {
		if n := len(st.Runs); n > 0 && st.Runs[n-1].Label == r.Newest && st.Runs[n-1].Change == ChangeSlower {
			out = append(out, vocab.StageName(st.Stage))
		}
	}
	return out
}

// changeLine describes one stage's change points.
func (st *HistoryStage) changeLine() string {
	if len(st.ChangePoints) == 0 {
		return "change points: none"
	}
	var parts []string
	for _, p := range st.Runs {
		if p.Change == "" {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%s: %s µs against %s µs, %s; threshold %s µs)", p.Label, p.Change,
			fmtUSf(p.MedianNS), fmtUSf(*p.ReferenceNS), fmtDeltaPct(p.DeltaPct), fmtUSf(*p.ThresholdNS)))
	}
	s := "change points: " + strings.Join(parts, "; ")
	if st.FirstSlower != nil {
		s += "\nfirst slower run: " + *st.FirstSlower
	}
	return s
}

// Doc renders the history for the text, markdown or JSON format.
func (r *HistoryReport) Doc(f Format) Doc {
	d := Doc{JSON: r}
	d.Blocks = append(d.Blocks, &Heading{Level: 1, Text: r.Title()})
	d.Blocks = append(d.Blocks, r.headLines())
	for i := range r.Stages {
		d.Blocks = append(d.Blocks, r.stageBlocks(&r.Stages[i])...)
	}
	if len(r.Stages) == 0 {
		d.Blocks = append(d.Blocks, r.emptyLines())
	}
	return d
}

// Title is the history's heading.
func (r *HistoryReport) Title() string { return "History: " + r.What }

// headLines say what the series is, which runs it holds and the rule.
func (r *HistoryReport) headLines() Lines {
	head := Lines{fmt.Sprintf("rank %d; samples are steps (edge steps %s); share = of the %s", r.Rank, edgeWord(r), r.ShareOf)}
	sel := "runs: every run"
	if len(r.Tags) > 0 {
		sel = "runs: those tagged " + strings.Join(r.Tags, " and ")
	}
	if r.By != "" {
		sel += ", ordered by tag " + r.By + " (runs without it left out)"
	} else {
		sel += ", in ingest order"
	}
	head = append(head, sel, "rule: "+r.Rule.Text)
	return append(head, r.Notes...)
}

// emptyLines stand in for the stages when no run has steps on the rank.
func (r *HistoryReport) emptyLines() Lines {
	return Lines{fmt.Sprintf("no steps of the selected runs on rank %d", r.Rank)}
}

// title heads one stage's series.
func (st *HistoryStage) title() string {
	return fmt.Sprintf("%s: %d run(s)", vocab.StageName(st.Stage), len(st.Runs))
}

// stageBlocks are one stage's heading, table and change-point lines.
func (r *HistoryReport) stageBlocks(st *HistoryStage) []any {
	blocks := []any{&Heading{Level: 2, Text: st.title()}}
	cols := []Column{{Name: "#", Right: true}, {Name: "Run"}}
	if r.By != "" {
		cols = append(cols, Column{Name: r.By})
	}
	cols = append(cols, Column{Name: "Ingested"}, Column{Name: "Steps", Right: true}, Column{Name: "µs/step", Right: true},
		Column{Name: "95% interval µs", Right: true}, Column{Name: "Launches/step", Right: true}, Column{Name: "Share %", Right: true},
		Column{Name: "vs previous runs", Right: true}, Column{Name: "Change"})
	t := &Table{Name: "history", Columns: cols}
	for _, p := range st.Runs {
		row := []string{strconv.Itoa(p.Order), p.Label}
		if r.By != "" {
			row = append(row, p.By)
		}
		ci := "-"
		if p.LoNS != nil {
			ci = fmtUSf(*p.LoNS) + " .. " + fmtUSf(*p.HiNS)
		}
		share := "-"
		if p.SharePct != nil {
			share = fmtPct(*p.SharePct)
		}
		vs := "-"
		if p.ReferenceNS != nil {
			vs = fmtDeltaPct(p.DeltaPct)
		}
		change := ""
		switch p.Change {
		case ChangeSlower:
			change = "▲ slower"
		case ChangeFaster:
			change = "▼ faster"
		}
		row = append(row, p.IngestedAt, strconv.Itoa(p.Steps), fmtUSf(p.MedianNS), ci,
			strconv.FormatFloat(p.LaunchesPerStep, 'f', 2, 64), share, vs, change)
		t.Rows = append(t.Rows, row)
	}
	blocks = append(blocks, t)
	l := Lines(strings.Split(st.changeLine(), "\n"))
	if len(st.Missing) > 0 {
		l = append(l, fmt.Sprintf("%d selected run(s) have no %s steps on rank %d: %s", len(st.Missing),
			vocab.StageName(st.Stage), r.Rank, listSome(st.Missing, 5)))
	}
	return append(blocks, l)
}

// Chart is one stage's series as a line chart: the median per step in µs
// with its interval, the change points marked with their direction.
func (r *HistoryReport) Chart(st *HistoryStage) LineChart {
	c := LineChart{Title: fmt.Sprintf("%s, %s, rank %d", r.What, vocab.StageName(st.Stage), r.Rank), Unit: "µs per step"}
	us := func(ns *float64) *float64 {
		if ns == nil {
			return nil
		}
		v := *ns / 1e3
		return &v
	}
	for _, p := range st.Runs {
		c.Points = append(c.Points, LinePoint{Run: p.Label, Value: p.MedianNS / 1e3, Lo: us(p.LoNS), Hi: us(p.HiNS), Change: p.Change})
	}
	return c
}

func edgeWord(r *HistoryReport) string {
	if r.KeepEdges {
		return "kept"
	}
	return "of traces with more than four left out"
}

// listSome lists up to n items and says how many more there are.
func listSome(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:n], ", "), len(xs)-n)
}

// CSVTable is the history as one machine-readable table (for plotting):
// one row per stage and run, exact nanoseconds.
func (r *HistoryReport) CSVTable() *Table {
	ff := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	fp := func(v *float64) string {
		if v == nil || math.IsNaN(*v) {
			return ""
		}
		return ff(*v)
	}
	t := &Table{Name: "history", Columns: cols("stage", "order", "run", "ingested_at", "by_value", "tags", "steps",
		"median_ns", "ci_lo_ns", "ci_hi_ns", "launches_per_step", "share_pct", "reference_ns", "noise_ns",
		"threshold_ns", "delta_pct", "change")}
	for _, st := range r.Stages {
		for _, p := range st.Runs {
			t.Rows = append(t.Rows, []string{st.Stage, strconv.Itoa(p.Order), p.Label, p.IngestedAt, p.By,
				strings.Join(p.Tags, " "), strconv.Itoa(p.Steps), ff(p.MedianNS), fp(p.LoNS), fp(p.HiNS),
				ff(p.LaunchesPerStep), fp(p.SharePct), fp(p.ReferenceNS), fp(p.NoiseNS), fp(p.ThresholdNS),
				fp(p.DeltaPct), p.Change})
		}
	}
	return t
}
