package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/kernelname"
	"github.com/tracehouse/tracehouse/queries"
)

// "Where the GPU waits" (issue 37): a stage's step time split into busy
// time and idle time by cause, for the device and per stream, and its
// longest gaps. Every figure is a row of idle_by_stage.sql or
// idle_worst_gaps.sql (sqllib/idle.sql defines them).

// IdleParts are the parts of a step, in the order reports show them; the
// idle causes are every part but busy.
var IdleParts = []string{"busy", "host_bound", "launch_latency", "sync", "graph_internal", "other"}

// idlePartNames are the parts as people read them.
var idlePartNames = map[string]string{"busy": "Busy", "host_bound": "Host-bound", "launch_latency": "Launch latency",
	"sync": "Sync", "graph_internal": "Graph-internal", "other": "Other idle"}

// TriageIdle is where the GPU waits in one stage, over the shown rank(s)
// and the stage's steps (edge steps left out).
type TriageIdle struct {
	// LaunchGapNS is the launch-latency threshold: a gap after an earlier
	// launch counts as launch latency under it, as other at or over it.
	LaunchGapNS int64 `json:"launch_gap_ns"`
	// Device is the union of the device's streams: its parts add up to
	// the step time exactly.
	Device  TriageIdleScope   `json:"device"`
	Streams []TriageIdleScope `json:"streams"`
	// WorstGaps are the longest device gaps, longest first.
	WorstGaps []TriageIdleGap `json:"worst_gaps"`
	// Steps are the stage's first steps, each in parts (the HTML
	// report's bar per step; in SQL: idle_steps).
	Steps []TriageIdleStep `json:"-"`
	// StageSteps counts the stage's (step, rank) pairs, of which Steps
	// are the first.
	StageSteps int64 `json:"-"`
}

// TriageIdleStep is one step of one rank in parts (device scope, summed
// over the rank's devices).
type TriageIdleStep struct {
	Rank, Step, WindowNS int64
	Parts                []TriageIdlePart
}

// TriageIdleScope is the device's or one stream's step time in parts.
type TriageIdleScope struct {
	Stream *int64 `json:"stream"` // null for the device
	// Steps counts the step rows summed (per step, rank and device; for a
	// stream, the steps it ran in).
	Steps int64 `json:"steps"`
	// WindowNS is the summed step time (a stream's own first start to
	// last end); WindowPerStepUS is it per step.
	WindowNS        int64            `json:"window_ns"`
	WindowPerStepUS float64          `json:"window_per_step_us"`
	Gaps            int64            `json:"gaps"`
	Parts           []TriageIdlePart `json:"parts"`
}

// TriageIdlePart is one part of a step: busy or one idle cause.
type TriageIdlePart struct {
	Part      string   `json:"part"`
	NS        int64    `json:"ns"`
	PerStepUS float64  `json:"per_step_us"`
	SharePct  *float64 `json:"share_pct"` // of the step time; null when it is 0
}

// TriageIdleGap is one of a stage's longest gaps.
type TriageIdleGap struct {
	GapNS      int64  `json:"gap_ns"`
	GapStartNS int64  `json:"gap_start_ns"`
	Cause      string `json:"cause"`
	Rank       int64  `json:"rank"`
	Step       int64  `json:"step"`
	Before     string `json:"before"`
	After      string `json:"after"`
	// Site is the Python site of the event after the gap (its own, else its
	// launch's): for a host-bound gap, where the late launch came from.
	Site *string `json:"site"`
	// KernelID is the event after the gap, in this warehouse (ids depend
	// on the order files were ingested: not in JSON or CSV).
	KernelID int64 `json:"-"`
}

// addIdle fills each stage's Idle from d's idle rows.
func (r *TriageReport) addIdle(d *queries.TriageData, section func(string) *TriageStage) {
	type scopeKey struct {
		stage, scope string
		stream       int64
	}
	scopes := map[scopeKey]*TriageIdleScope{}
	for _, row := range d.Idle {
		st := section(row.Stage)
		if st.Idle == nil {
			st.Idle = &TriageIdle{LaunchGapNS: row.LaunchGapNS, Streams: []TriageIdleScope{}, WorstGaps: []TriageIdleGap{}}
		}
		k := scopeKey{row.Stage, row.Scope, row.Stream.Int64}
		sc := scopes[k]
		if sc == nil {
			s := TriageIdleScope{Steps: row.Steps, WindowNS: row.WindowNS, WindowPerStepUS: row.WindowPerStepNS / 1000,
				Gaps: row.Gaps, Parts: []TriageIdlePart{}}
			if row.Scope == "device" {
				st.Idle.Device = s
				sc = &st.Idle.Device
			} else {
				s.Stream = optInt(row.Stream)
				st.Idle.Streams = append(st.Idle.Streams, s)
				sc = &st.Idle.Streams[len(st.Idle.Streams)-1]
			}
			scopes[k] = sc
		}
		p := TriageIdlePart{Part: row.Part, NS: row.NS, PerStepUS: row.PerStepNS / 1000}
		if row.SharePct.Valid {
			v := row.SharePct.Float64
			p.SharePct = &v
		}
		sc.Parts = append(sc.Parts, p)
	}
	for _, row := range d.IdleSteps {
		st := section(row.Stage)
		if st.Idle == nil {
			continue // no stage rows: no section to draw in
		}
		id := st.Idle
		id.StageSteps = row.StageSteps
		if n := len(id.Steps); n == 0 || id.Steps[n-1].Rank != row.Rank || id.Steps[n-1].Step != row.Step {
			id.Steps = append(id.Steps, TriageIdleStep{Rank: row.Rank, Step: row.Step, WindowNS: row.WindowNS})
		}
		p := TriageIdlePart{Part: row.Part, NS: row.NS, PerStepUS: float64(row.NS) / 1000}
		if row.SharePct.Valid {
			v := row.SharePct.Float64
			p.SharePct = &v
		}
		last := &id.Steps[len(id.Steps)-1]
		last.Parts = append(last.Parts, p)
	}
	for _, g := range d.IdleGaps {
		st := section(g.Stage)
		if st.Idle == nil {
			continue // no step rows: nothing to place the gap in
		}
		row := TriageIdleGap{GapNS: g.GapNS, GapStartNS: g.GapStartNS, Cause: g.Cause, Rank: g.Rank, Step: g.Step,
			Before: g.Before, After: g.After, KernelID: g.KernelID}
		if g.Site.Valid {
			s := g.Site.String
			row.Site = &s
		}
		st.Idle.WorstGaps = append(st.Idle.WorstGaps, row)
	}
}

// idlePartCell is a part per step with its share: "250 µs 28.3%"; "-"
// when the part is 0.
func idlePartCell(p TriageIdlePart) string {
	if p.NS == 0 {
		return "-"
	}
	s := fmtDur(p.PerStepUS * 1000)
	if p.SharePct != nil {
		s += " " + fmtPct(*p.SharePct)
	}
	return s
}

// idleLine is the one-line summary of the device's parts.
func idleLine(st *TriageStage) string {
	id := st.Idle
	var parts []string
	for _, p := range id.Device.Parts {
		if p.Part != "busy" && p.NS == 0 {
			continue
		}
		parts = append(parts, strings.ToLower(idlePartNames[p.Part])+" "+idlePartCell(p))
	}
	return fmt.Sprintf("Step time %s per step (mean of %d step(s), device: the union of its streams) = %s",
		fmtDur(id.Device.WindowPerStepUS*1000), id.Device.Steps, strings.Join(parts, " + "))
}

// idleTable is the parts per step for the device and each stream.
func idleTable(st *TriageStage) *Table {
	cols := []Column{{Name: "Scope"}, {Name: "Window", Right: true}}
	for _, p := range IdleParts {
		cols = append(cols, Column{Name: idlePartNames[p], Right: true})
	}
	cols = append(cols, Column{Name: "Gaps", Right: true})
	t := &Table{Name: "idle", Columns: cols}
	row := func(name string, sc TriageIdleScope) {
		cells := []string{name, fmtDur(sc.WindowPerStepUS * 1000)}
		byPart := map[string]TriageIdlePart{}
		for _, p := range sc.Parts {
			byPart[p.Part] = p
		}
		for _, p := range IdleParts {
			cells = append(cells, idlePartCell(byPart[p]))
		}
		cells = append(cells, strconv.FormatInt(sc.Gaps, 10))
		t.Rows = append(t.Rows, cells)
	}
	row("device", st.Idle.Device)
	for _, s := range st.Idle.Streams {
		row("stream "+strconv.FormatInt(*s.Stream, 10), s)
	}
	return t
}

// idleGapTable lists the longest gaps; text on a terminal names the
// kernels around a gap by their labels (kernelname.Labels over the table).
func idleGapTable(st *TriageStage, f Format, ranks bool) *Table {
	cols := []Column{{Name: "Gap", Right: true}, {Name: "Cause", Keep: true}, {Name: "Step", Right: true}}
	if ranks {
		cols = append(cols, Column{Name: "Rank", Right: true})
	}
	cols = append(cols, Column{Name: "Before", Kernel: true}, Column{Name: "After", Kernel: true},
		Column{Name: "Python site of the launch after", Short: "Site of the launch after", Cut: CutPath, Detail: 1})
	t := &Table{Name: "idle_gaps", Columns: cols, Empty: "no gap inside a step"}
	var names []string
	for _, g := range st.Idle.WorstGaps {
		names = append(names, g.Before, g.After)
	}
	labels := kernelname.Labels(names)
	for i, g := range st.Idle.WorstGaps {
		cells := []string{fmtDur(float64(g.GapNS)), strings.ReplaceAll(g.Cause, "_", "-"), strconv.FormatInt(g.Step, 10)}
		if ranks {
			cells = append(cells, strconv.FormatInt(g.Rank, 10))
		}
		site := "-"
		if g.Site != nil {
			site = *g.Site
		}
		t.Rows = append(t.Rows, append(slices.Clone(cells), g.Before, g.After, site))
		if f == Text {
			t.Narrow = append(t.Narrow, append(cells, labels[2*i], labels[2*i+1], site))
		}
	}
	return t
}

// idleBlocks are the "Where the GPU waits" section of one stage; nil when
// the stage has no step rows. The causes are explained under the first
// stage's section only.
func (r *TriageReport) idleBlocks(st *TriageStage, f Format) []any {
	if st.Idle == nil {
		return nil
	}
	blocks := []any{Lines{idleLine(st)}, idleTable(st), Lines{"Longest gaps:"}, idleGapTable(st, f, r.Rank == nil)}
	for i := range r.Stages {
		if r.Stages[i].Idle != nil {
			if &r.Stages[i] != st {
				return blocks
			}
			break
		}
	}
	note := fmt.Sprintf("Idle causes: host-bound (the launch began after the GPU went idle), launch latency (launched earlier, gap under %s),"+
		" sync (a blocking call on the launching thread spans the gap), graph-internal (inside one graph replay), other.",
		fmtDur(float64(st.Idle.LaunchGapNS)))
	return append(blocks, Lines{note})
}

// idleCSV are a stage's idle tables for the CSV format.
func idleCSV(sp string, st *TriageStage) []*Table {
	if st.Idle == nil {
		return nil
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	parts := &Table{Name: sp + ".idle", Columns: cols("scope", "stream", "steps", "window_ns", "gaps", "part", "ns", "share_pct", "launch_gap_ns")}
	add := func(sc TriageIdleScope) {
		scope, stream := "device", ""
		if sc.Stream != nil {
			scope, stream = "stream", i64(*sc.Stream)
		}
		for _, p := range sc.Parts {
			share := ""
			if p.SharePct != nil {
				share = strconv.FormatFloat(*p.SharePct, 'g', -1, 64)
			}
			parts.Rows = append(parts.Rows, []string{scope, stream, i64(sc.Steps), i64(sc.WindowNS), i64(sc.Gaps), p.Part,
				i64(p.NS), share, i64(st.Idle.LaunchGapNS)})
		}
	}
	add(st.Idle.Device)
	for _, s := range st.Idle.Streams {
		add(s)
	}
	gaps := &Table{Name: sp + ".idle_gaps", Columns: cols("gap_ns", "gap_start_ns", "cause", "rank", "step", "before", "after", "site")}
	for _, g := range st.Idle.WorstGaps {
		site := ""
		if g.Site != nil {
			site = *g.Site
		}
		gaps.Rows = append(gaps.Rows, []string{i64(g.GapNS), i64(g.GapStartNS), g.Cause, i64(g.Rank), i64(g.Step),
			g.Before, g.After, site})
	}
	return []*Table{parts, gaps}
}

// idlePartColors colour the parts in charts: busy blue, the host's causes
// warm, the GPU's own cool, other grey.
var idlePartColors = map[string]string{"Busy": "#4e79a7", "Host-bound": "#e15759", "Launch latency": "#f28e2b",
	"Sync": "#b07aa1", "Graph-internal": "#76b7b2", "Other idle": "#bab0ac"}

// idleBars is the stage's step in parts, one 100% bar for the device and
// one per stream (each part's share_pct of its window).
func idleBars(st *TriageStage) *scene {
	row := func(label string, sc TriageIdleScope) stackRow {
		r := stackRow{Label: label}
		for _, p := range sc.Parts {
			if p.SharePct == nil || p.NS == 0 {
				continue
			}
			name := idlePartNames[p.Part]
			r.Segs = append(r.Segs, stackSeg{Key: name, Pct: *p.SharePct,
				Title: fmt.Sprintf("%s, %s: %s per step, %s of the step", label, strings.ToLower(name), fmtDur(p.PerStepUS*1000), fmtPct(*p.SharePct))})
		}
		return r
	}
	rows := []stackRow{row("device", st.Idle.Device)}
	for _, s := range st.Idle.Streams {
		rows = append(rows, row("stream "+strconv.FormatInt(*s.Stream, 10), s))
	}
	return stackedBarsBy("idle", "Busy and idle time by cause per step, "+st.displayName, rows, idlePartColor)
}

func idlePartColor(k string) string {
	if c, ok := idlePartColors[k]; ok {
		return c
	}
	return "#c7c7c7"
}

// idleStepBars is the stage's first steps, one 100% bar each (the
// device's parts, each part's share_pct of that step); nil without steps.
// With every rank shown a bar is one rank's step.
func idleStepBars(st *TriageStage, ranks bool) *scene {
	if st.Idle == nil || len(st.Idle.Steps) == 0 {
		return nil
	}
	var rows []stackRow
	for _, s := range st.Idle.Steps {
		label := "step " + strconv.FormatInt(s.Step, 10)
		if ranks {
			label = fmt.Sprintf("rank %d step %d", s.Rank, s.Step)
		}
		r := stackRow{Label: label}
		for _, p := range s.Parts {
			if p.SharePct == nil || p.NS == 0 {
				continue
			}
			name := idlePartNames[p.Part]
			r.Segs = append(r.Segs, stackSeg{Key: name, Pct: *p.SharePct,
				Title: fmt.Sprintf("%s of %s, %s: %s, %s of the step", label, fmtDur(float64(s.WindowNS)), strings.ToLower(name),
					fmtDur(float64(p.NS)), fmtPct(*p.SharePct))})
		}
		rows = append(rows, r)
	}
	return stackedBarsSized("idle steps", "Busy and idle time by cause, each step, "+st.displayName, rows, idlePartColor, 14, 4)
}

// idleStepCaption says which steps idleStepBars drew.
func idleStepCaption(st *TriageStage, ranks bool) string {
	n, unit := len(st.Idle.Steps), "steps"
	if ranks {
		unit = "steps of a rank"
	}
	which := fmt.Sprintf("all %d %s", n, unit)
	if int64(n) < st.Idle.StageSteps {
		which = fmt.Sprintf("the first %d of %d %s", n, st.Idle.StageSteps, unit)
	}
	return fmt.Sprintf("Each step in busy time and idle time by cause (device: the union of its streams; %s, edge steps left out; the step time on hover)", which)
}
