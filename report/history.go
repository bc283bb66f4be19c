package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/vocab"
)

// The views of a history (analysis.HistoryReport): text, markdown, JSON,
// CSV, and its line charts.

// changeLine describes one stage's change points.
func historyChangeLine(st *analysis.HistoryStage) string {
	if len(st.ChangePoints) == 0 {
		return "change points: none"
	}
	var parts []string
	for _, p := range st.Runs {
		if p.Change == "" {
			continue
		}
		change := p.Change
		if p.Spike {
			change += ", a one-run spike"
		}
		parts = append(parts, fmt.Sprintf("%s (%s: %s µs against %s µs, %s; threshold %s µs)", p.Label, change,
			fmtUSf(*p.MedianNS), fmtUSf(*p.ReferenceNS), fmtDeltaPct(p.DeltaPct), fmtUSf(*p.ThresholdNS)))
	}
	s := "change points: " + strings.Join(parts, "; ")
	if st.FirstSlower != nil {
		s += "\nfirst slower run (start of a lasting shift): " + *st.FirstSlower
	}
	if len(st.Spikes) > 0 {
		s += "\none-run spikes (the next run is back; not a shift): " + strings.Join(st.Spikes, ", ")
	}
	if g := st.Gate; g != nil {
		state := "within it: passes"
		if g.Regressed {
			state = "beyond it: a regression"
		}
		s += fmt.Sprintf("\ngate: the newest run, %s µs, against the level before %s, %s µs + threshold %s µs: %s",
			fmtUSf(g.NewestNS), g.Shift, fmtUSf(g.LevelNS), fmtUSf(g.ThresholdNS), state)
	}
	return s
}

// HistoryDoc renders the history for the text, markdown or JSON format.
func HistoryDoc(r *analysis.HistoryReport, f Format) Doc {
	d := Doc{JSON: r}
	d.Blocks = append(d.Blocks, &Heading{Level: 1, Text: HistoryTitle(r)})
	d.Blocks = append(d.Blocks, historyHeadLines(r))
	for i := range r.Stages {
		d.Blocks = append(d.Blocks, historyStageBlocks(r, &r.Stages[i])...)
	}
	if len(r.Stages) == 0 {
		d.Blocks = append(d.Blocks, historyEmptyLines(r))
	}
	return d
}

// HistoryTitle is the history's heading.
func HistoryTitle(r *analysis.HistoryReport) string { return "History: " + r.What }

// headLines say what the series is, which runs it holds and the rule.
func historyHeadLines(r *analysis.HistoryReport) Lines {
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
func historyEmptyLines(r *analysis.HistoryReport) Lines {
	return Lines{fmt.Sprintf("no steps of the selected runs on rank %d", r.Rank)}
}

// title heads one stage's series.
func historyStageTitle(st *analysis.HistoryStage) string {
	absent := 0
	for _, p := range st.Runs {
		if p.Absent != "" {
			absent++
		}
	}
	if absent > 0 {
		return fmt.Sprintf("%s: %d run(s), %d absent", vocab.StageName(st.Stage), len(st.Runs), absent)
	}
	return fmt.Sprintf("%s: %d run(s)", vocab.StageName(st.Stage), len(st.Runs))
}

// stageBlocks are one stage's heading, table and change-point lines.
func historyStageBlocks(r *analysis.HistoryReport, st *analysis.HistoryStage) []any {
	blocks := []any{&Heading{Level: 2, Text: historyStageTitle(st)}}
	// On a narrow terminal the interval, launches and ingest time go
	// under the row; labels, figures and the change are never cut.
	cols := []Column{{Name: "#", Right: true}, {Name: "Run", Keep: true}}
	if r.By != "" {
		cols = append(cols, Column{Name: r.By, Keep: true})
	}
	cols = append(cols, Column{Name: "Ingested", Keep: true, Detail: 1}, Column{Name: "Steps", Right: true}, Column{Name: "µs/step", Right: true},
		Column{Name: "95% interval µs", Short: "95% CI µs", Right: true, Detail: 1}, Column{Name: "Launches/step", Short: "Launches", Right: true, Detail: 1},
		Column{Name: "Share %", Right: true}, Column{Name: "vs previous runs", Short: "vs previous", Right: true}, Column{Name: "Change", Keep: true})
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
		case analysis.ChangeSlower:
			change = "▲ slower"
		case analysis.ChangeFaster:
			change = "▼ faster"
		}
		if p.Spike {
			change += " (spike)"
		}
		if p.Absent != "" {
			row = append(row, p.IngestedAt, strconv.Itoa(p.Steps), "absent", "-", "-", "-", "-", p.Absent)
			t.Rows = append(t.Rows, row)
			continue
		}
		row = append(row, p.IngestedAt, strconv.Itoa(p.Steps), fmtUSf(*p.MedianNS), ci,
			strconv.FormatFloat(p.LaunchesPerStep, 'f', 2, 64), share, vs, change)
		t.Rows = append(t.Rows, row)
	}
	blocks = append(blocks, t)
	l := Lines(strings.Split(historyChangeLine(st), "\n"))
	if len(st.Missing) > 0 {
		l = append(l, fmt.Sprintf("%d selected run(s) have no %s steps on rank %d: %s", len(st.Missing),
			vocab.StageName(st.Stage), r.Rank, listSome(st.Missing, 5)))
	}
	return append(blocks, l)
}

// HistoryChart is one stage's series as a line chart: the median per step in µs
// with its interval, the change points marked with their direction.
func HistoryChart(r *analysis.HistoryReport, st *analysis.HistoryStage) LineChart {
	c := LineChart{Title: fmt.Sprintf("%s, %s, rank %d", r.What, vocab.StageName(st.Stage), r.Rank), Unit: "µs per step"}
	us := func(ns *float64) *float64 {
		if ns == nil {
			return nil
		}
		v := *ns / 1e3
		return &v
	}
	for _, p := range st.Runs {
		if p.Absent != "" {
			c.Points = append(c.Points, LinePoint{Run: p.Label, Absent: true})
			continue
		}
		c.Points = append(c.Points, LinePoint{Run: p.Label, Value: *p.MedianNS / 1e3, Lo: us(p.LoNS), Hi: us(p.HiNS), Change: p.Change})
	}
	return c
}

func edgeWord(r *analysis.HistoryReport) string {
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

// HistoryCSVTable is the history as one machine-readable table (for plotting):
// one row per stage and run, exact nanoseconds.
func HistoryCSVTable(r *analysis.HistoryReport) *Table {
	ff := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	fp := func(v *float64) string {
		if v == nil || math.IsNaN(*v) {
			return ""
		}
		return ff(*v)
	}
	t := &Table{Name: "history", Columns: cols("stage", "order", "run", "ingested_at", "by_value", "tags", "steps", "absent",
		"median_ns", "ci_lo_ns", "ci_hi_ns", "launches_per_step", "share_pct", "reference_ns", "noise_ns",
		"threshold_ns", "delta_pct", "change", "spike")}
	for _, st := range r.Stages {
		for _, p := range st.Runs {
			t.Rows = append(t.Rows, []string{st.Stage, strconv.Itoa(p.Order), p.Label, p.IngestedAt, p.By,
				strings.Join(p.Tags, " "), strconv.Itoa(p.Steps), p.Absent, fp(p.MedianNS), fp(p.LoNS), fp(p.HiNS),
				ff(p.LaunchesPerStep), fp(p.SharePct), fp(p.ReferenceNS), fp(p.NoiseNS), fp(p.ThresholdNS),
				fp(p.DeltaPct), p.Change, strconv.FormatBool(p.Spike)})
		}
	}
	return t
}
