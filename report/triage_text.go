package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/kernelname"

	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/vocab"
)

// The text and markdown view of a triage report.

// timelineWindows are the windows d asked for, as Timelines grouped by the
// stage of their overlap row, in overlap-row order.
func timelineWindows(d *queries.TriageData) map[string][]Timeline {
	out := map[string][]Timeline{}
	for _, tl := range d.Timelines {
		o := d.Overlap[tl.Overlap]
		t := Timeline{Title: fmt.Sprintf("%s %s: longest instance %s", o.Priority, o.Kernel, fmtDur(float64(o.Longest.DurNS))),
			Kernel: o.Kernel, FromNS: tl.FromNS, ToNS: tl.ToNS, FocusID: o.Longest.KernelID}
		for _, e := range tl.Events {
			t.Events = append(t.Events, TimelineEvent{KernelID: e.KernelID, Name: e.Name, Category: e.Category,
				Stream: e.Stream.Int64, HasStream: e.Stream.Valid, TSNS: e.TSNS, DurNS: e.DurNS})
		}
		out[o.Stage] = append(out[o.Stage], t)
	}
	return out
}

// drawTimelines renders a stage's windows as ASCII for a terminal width
// (0: the full drawing, names whole): the plot narrows to fit, and kernel
// names are the labels of the window's kernels.
func drawTimelines(ts []Timeline, width int) []string {
	var lines []string
	for i, t := range ts {
		if i > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, timelineLines(t, width)...)
	}
	return lines
}

func fmtMS(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 2, 64) }
func fmtUS(ns int64) string { return strconv.FormatFloat(float64(ns)/1e3, 'f', 1, 64) }
func fmtPct(p float64) string {
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}

// Doc renders the report for the text or markdown format. Text tables
// carry whole names for --wide and kernel labels (kernelname.Labels, per
// table) for a terminal; markdown keeps whole names and every column.
func (r *TriageReport) Doc(f Format) Doc {
	blocks := []any{&Heading{Level: 1, Text: "Triage View"}, r.headerLines()}
	for i := range r.Stages {
		st := &r.Stages[i]
		rank := "all ranks"
		if st.Rank != nil {
			rank = "rank " + strconv.FormatInt(*st.Rank, 10)
		}
		blocks = append(blocks, &Heading{Level: 2, Text: fmt.Sprintf("%s (%s)", st.displayName, rank)})
		blocks = append(blocks, Lines{r.familyLine(st)})
		sub := func(title string, b any) {
			if f == Text {
				// the text renderer separates only level-1/2 headings
				blocks = append(blocks, Lines{""})
			}
			blocks = append(blocks, &Heading{Level: 3, Text: title}, b)
		}
		sub("Kernels", r.kernelTable(st, f))
		if l := launchLine(st); l != "" {
			blocks = append(blocks, Lines{l})
		}
		if notes := kernelNotes(st); len(notes) > 0 {
			blocks = append(blocks, notes)
		}
		if idle := r.idleBlocks(st, f); idle != nil {
			sub("Where the GPU waits", idle[0])
			blocks = append(blocks, idle[1:]...)
		}
		if s := r.stragglerBlocks(st, f); s != nil {
			sub("Straggler rank", s[0])
			blocks = append(blocks, s[1:]...)
		}
		sub("Overlap opportunities", overlapTable(st, f))
		if ts := r.windows[st.Stage]; len(ts) > 0 {
			// keep the drawing's columns: a fenced block in markdown
			sub("Timelines", &Drawing{Draw: func(width int) []string { return drawTimelines(ts, width) }})
		}
		sub("Fuse patterns", fusionTable(st, f))
		if st.Similarity != nil {
			// at most one similarity note, after the table, never mixed into it
			blocks = append(blocks, Lines{st.Similarity.Note})
		}
	}
	return Doc{Blocks: blocks, JSON: r}
}

func (r *TriageReport) headerLines() Lines {
	var l Lines
	l = append(l, "Mode: "+r.Mode)
	fw := "Framework: " + r.Framework
	if r.FrameworkEvidence != "" {
		fw += " (evidence: " + r.FrameworkEvidence + ")"
	}
	l = append(l, fw)
	par := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatInt(*p, 10)
	}
	run := "Run: " + r.Run
	if r.MappingRun != nil {
		run += " (formal; mapping: " + *r.MappingRun + ")"
	}
	l = append(l, fmt.Sprintf("%s   Model: %s   TP/DP/EP/PP: %s/%s/%s/%s", run, r.Model,
		par(r.Parallel.TP), par(r.Parallel.DP), par(r.Parallel.EP), par(r.Parallel.PP)))
	l = append(l, "Traces:")
	for _, t := range r.Traces {
		role := ""
		if r.MappingRun != nil {
			role = ", " + t.Role + " run " + t.Run
		}
		l = append(l, fmt.Sprintf("  %s (rank %d, %s%s)", t.Path, t.Rank, vocab.StageName(t.Stage), role))
	}
	l = append(l, r.gpuEventLines()...)
	for _, st := range r.Stages {
		if !st.hasTotals {
			continue
		}
		l = append(l, fmt.Sprintf("Stage %s: summed kernel time %s, GPU busy (union) %s, window %s, streams %d",
			st.displayName, fmtDur(float64(st.Totals.KernelTimeNS)), fmtDur(float64(st.Totals.BusyTimeNS)), fmtDur(float64(st.Totals.WindowNS)), st.Totals.Streams))
	}
	for i := range r.Stages {
		if line := commOverlapLine(&r.Stages[i]); line != "" {
			l = append(l, line)
		}
	}
	var per []string
	for _, st := range r.Stages {
		per = append(per, st.displayName+" "+fmtPct(st.Coverage.CoveragePct))
	}
	perStage := ""
	if len(per) > 1 {
		perStage = " (" + strings.Join(per, ", ") + ")"
	}
	c := r.Coverage
	if r.MappingRun == nil {
		line := fmt.Sprintf("Attribution: %s of kernel time has a Python site%s", fmtPct(c.CoveragePct), perStage)
		if c.ReplayTimeNS > 0 && c.KernelTimeNS > 0 {
			line += fmt.Sprintf("; graph replays located by their graph launch: %s",
				fmtPct(float64(c.ReplayTimeNS)*100/float64(c.KernelTimeNS)))
		}
		l = append(l, line)
	} else {
		pct := func(ns int64) string {
			if c.KernelTimeNS == 0 {
				return fmtPct(0)
			}
			return fmtPct(float64(ns) * 100 / float64(c.KernelTimeNS))
		}
		l = append(l, fmt.Sprintf("Mapping coverage: %s of formal kernel time received a Python site from %s%s",
			fmtPct(c.CoveragePct), *r.MappingRun, perStage))
		l = append(l, fmt.Sprintf("  matched by exact name %s, by name in another stage %s, by template-stripped name %s, unmapped %s",
			pct(c.ExactTimeNS), pct(c.CrossStageTimeNS), pct(c.BaseTimeNS), pct(c.UnmappedNS)))
	}
	for _, n := range r.Notes {
		l = append(l, "Note: "+n)
	}
	return l
}

// gpuEventLines list GPU events per stage and rank and name the pairs
// with none.
func (r *TriageReport) gpuEventLines() []string {
	var parts, none []string
	for i := 0; i < len(r.GPUEvents); {
		stage := r.GPUEvents[i].Stage
		var ranks []string
		for ; i < len(r.GPUEvents) && r.GPUEvents[i].Stage == stage; i++ {
			g := r.GPUEvents[i]
			ranks = append(ranks, fmt.Sprintf("rank %d: %d", g.Rank, g.Events))
			if g.Events == 0 {
				none = append(none, fmt.Sprintf("%s rank %d", vocab.StageName(g.Stage), g.Rank))
			}
		}
		parts = append(parts, vocab.StageName(stage)+" "+strings.Join(ranks, ", "))
	}
	out := []string{"GPU events: " + strings.Join(parts, "; ")}
	if len(none) > 0 {
		out = append(out, "  no GPU events: "+strings.Join(none, ", "))
	} else if len(parts) > 0 {
		out = append(out, "  every stage has GPU events on every rank")
	} else {
		out[0] = "GPU events: none"
	}
	return out
}

func (r *TriageReport) familyLine(st *TriageStage) string {
	var parts []string
	for _, f := range st.Families {
		parts = append(parts, f.Family+" "+fmtPct(f.SharePct))
	}
	if len(parts) == 0 {
		return "Families: none"
	}
	return "Families: " + strings.Join(parts, ", ") + " (of summed kernel time)"
}

// kernelTable is a stage's kernel table. Text leaves Category out (the
// family implies it), shows kernel labels on a terminal, and moves the
// family under the row where that shows names whole (at 80 columns; the
// family roll-up line above the table has them all).
func (r *TriageReport) kernelTable(st *TriageStage, f Format) *Table {
	text := f == Text
	cols := []Column{{Name: "Kernel", Kernel: true}, {Name: "Family", Keep: true}}
	if text {
		cols[1].Detail = 1
	} else {
		cols = append(cols, Column{Name: "Category"})
	}
	cols = append(cols, Column{Name: "GPU time", Right: true},
		Column{Name: "Share", Right: true}, Column{Name: "Launches", Short: "Calls", Right: true}, Column{Name: "Avg", Right: true})
	if r.Rank == nil {
		cols = append(cols, Column{Name: "Rank spread", Right: true, Detail: 1})
	}
	cols = append(cols, Column{Name: "Python location (site share)", Short: "Python location", Cut: CutPath, Sep: "; ", Detail: 2},
		Column{Name: "CPU op", Sep: "; ", Detail: 2})
	cols = append(cols, spreadColumns()...)
	cols = append(cols, launchColumns()...)
	t := &Table{Name: "kernels", Columns: cols}
	names := make([]string, len(st.Kernels))
	for i, k := range st.Kernels {
		names[i] = k.Kernel
	}
	labels := kernelname.Labels(names)
	for i, k := range st.Kernels {
		row := []string{k.Kernel, k.Family}
		if !text {
			row = append(row, k.Category)
		}
		row = append(row, fmtDur(float64(k.GPUTimeNS)), fmtPct(k.SharePct),
			strconv.FormatInt(k.Launches, 10), fmtDur(k.AvgUS*1000))
		if r.Rank == nil && k.RankSpread != nil {
			s := k.RankSpread
			row = append(row, strings.Join(fmtDurs(s.MinUS*1000, s.MedianUS*1000, s.MaxUS*1000), " / "))
		}
		loc, ops := siteCells(k)
		row = append(row, loc, ops)
		row = append(row, spreadCells(k)...)
		row = append(row, launchCells(k)...)
		t.Rows = append(t.Rows, row)
		if text {
			narrow := append([]string{labels[i]}, row[1:]...)
			t.Narrow = append(t.Narrow, narrow)
		}
	}
	if len(t.Rows) == 0 {
		// an empty kernel table prints one row saying so, rather than
		// vanishing (a reader would take it for a missing stage).
		msg := fmt.Sprintf("(no kernel reached %s of summed kernel time; %d hidden, --min-share 0 shows all)",
			strconv.FormatFloat(r.MinSharePct, 'f', -1, 64)+"%", st.KernelsHidden)
		if f == Text {
			// a terminal gets the sentence whole, not cut to a column
			t.Empty = msg
			return t
		}
		row := make([]string, len(cols))
		row[0] = msg
		for i := 1; i < len(row); i++ {
			row[i] = "-"
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// kernelNotes explain, once under a kernel table, the marks its location
// column uses.
func kernelNotes(st *TriageStage) Lines {
	var cross, replay bool
	for _, k := range st.Kernels {
		cross = cross || k.Match == "cross-stage" || k.Match == "base-cross-stage"
		replay = replay || k.Location == "graph-replay"
	}
	var l Lines
	if st.KernelsHidden > 0 && len(st.Kernels) > 0 {
		l = append(l, fmt.Sprintf("%d kernel(s) under --min-share hidden (%s of summed kernel time); --min-share 0 shows all",
			st.KernelsHidden, fmtDur(float64(st.HiddenTimeNS))))
	}
	if cross {
		l = append(l, "~ site mapped from another stage of the mapping run (it has no kernel of that name in this stage)")
	}
	if replay {
		l = append(l, "graph replay @: kernels replayed by a CUDA/HIP graph, located by the Python frame around the graph launch;"+
			" two-trace mode (--mapping with an eager run) gives per-kernel sites")
	}
	return l
}

// siteCells are the "Python location (site share)" and "CPU op" cells.
func siteCells(k TriageKernel) (string, string) {
	if len(k.Sites) == 0 {
		return k.Location, "-"
	}
	var locs, ops []string
	for _, s := range k.Sites {
		loc := s.Location
		if k.Match == "cross-stage" || k.Match == "base-cross-stage" {
			loc = "~" + loc
		}
		if k.SiteCount > 1 {
			loc += fmt.Sprintf(" (site share %.0f%%)", s.SiteSharePct)
		}
		locs = append(locs, loc)
		op := "-"
		if s.CPUOp != nil {
			op = *s.CPUOp
		}
		ops = append(ops, op)
	}
	return strings.Join(locs, "; "), strings.Join(ops, "; ")
}

// overlapTable is a stage's overlap-opportunity table. Markdown (and
// HTML) keep the Signal and Recommendation columns as sentences;
// text splits the signal into short numeric columns (the kernel's time,
// its share of GPU busy time, exclusive and hidden shares, the kernel it
// hides under) and moves the known paths into numbered notes.
func overlapTable(st *TriageStage, f Format) *Table {
	if f != Text {
		t := &Table{Name: "overlap", Empty: "no overlap opportunity above the bar",
			Columns: []Column{{Name: "Priority"}, {Name: "Verdict"}, {Name: "Kernel"}, {Name: "Python scope", Cut: CutPath},
				{Name: "Signal", Cut: CutEnd}, {Name: "Dep risk"}, {Name: "Recommendation", Cut: CutEnd}}}
		for _, o := range st.Overlap {
			rec := o.Recommendation
			if len(o.KnownPaths) > 0 {
				rec += "; " + strings.Join(o.KnownPaths, "; ")
			}
			t.Rows = append(t.Rows, []string{o.Priority, o.Verdict, o.Kernel, o.Scope, o.Signal, o.DepRisk, rec})
		}
		return t
	}
	t := &Table{Name: "overlap", Empty: "no overlap opportunity above the bar",
		Columns: []Column{{Name: "Priority", Short: "Prio", Keep: true}, {Name: "Verdict", Keep: true}, {Name: "Kernel", Kernel: true},
			{Name: "Python scope", Cut: CutPath, Detail: 2}, {Name: "Time", Right: true}, {Name: "Busy", Right: true},
			{Name: "Excl", Right: true}, {Name: "Hidden", Right: true, Detail: 1}, {Name: "Under", Detail: 2},
			{Name: "Dep risk", Short: "Dep", Keep: true, Detail: 1}, {Name: "Recommendation", Short: "Advice", Keep: true},
			{Name: "Known path", Prose: true}}}
	var names []string
	for _, o := range st.Overlap {
		names = append(names, o.Kernel)
		if o.Dominant != nil {
			names = append(names, *o.Dominant)
		}
	}
	label := map[string]string{}
	for i, l := range kernelname.Labels(names) {
		label[names[i]] = l
	}
	for _, o := range st.Overlap {
		under, underLabel := "-", "-"
		if o.Dominant != nil {
			under, underLabel = *o.Dominant, label[*o.Dominant]
		}
		var known []string
		for _, k := range o.KnownPaths {
			// the note says "Known path:" once; another framework's entry
			// keeps that it is one
			k = strings.TrimPrefix(k, "Known path: ")
			if rest, ok := strings.CutPrefix(k, "Known path elsewhere: "); ok {
				k = "elsewhere: " + rest
			}
			known = append(known, k)
		}
		row := []string{o.Priority, o.Verdict, o.Kernel, o.Scope, fmtDur(float64(o.TotalNS)),
			strconv.FormatFloat(o.BusySharePct, 'f', 1, 64) + "%", strconv.FormatFloat(o.ExclusivePct, 'f', 0, 64) + "%",
			strconv.FormatFloat(o.HiddenPct, 'f', 0, 64) + "%", under, o.DepRisk, o.Recommendation, strings.Join(known, "; ")}
		t.Rows = append(t.Rows, row)
		narrow := slices.Clone(row)
		narrow[2], narrow[8] = label[o.Kernel], underLabel
		t.Narrow = append(t.Narrow, narrow)
	}
	return t
}

// fusedPaths is the "Candidate fused path" cell: the first path, and how
// many more the entry lists (all of them when all is set: markdown).
func fusedPaths(f TriageFusion, all bool) string {
	if len(f.Sources) <= 1 {
		return f.FusedPath
	}
	if all {
		return f.Framework + ": " + strings.Join(f.Sources, "; ")
	}
	return fmt.Sprintf("%s (+%d more)", f.FusedPath, len(f.Sources)-1)
}

// fusionTable is a stage's fuse-pattern table: text names the first
// candidate path and how many more, markdown (and HTML) all of them; text
// shows the evidence kernels by their labels on a terminal.
func fusionTable(st *TriageStage, f Format) *Table {
	text := f == Text
	t := &Table{Name: "fusions", Empty: "no fuse pattern matched",
		Columns: []Column{{Name: "Pattern", Min: 16, Cut: CutPhrase}, {Name: "Status", Keep: true}, {Name: "Confidence", Short: "Conf", Keep: true},
			{Name: "Related GPU time", Short: "GPU time", Right: true}, {Name: "Share", Right: true}, {Name: "Evidence kernels", Short: "Evidence", Sep: ", ", Min: 24, Detail: 1},
			{Name: "Current Python location", Short: "Python location", Cut: CutPath, Sep: "; ", Detail: 2},
			{Name: "Candidate fused path", Prose: true}, {Name: "Rationale", Prose: true}}}
	var names []string
	for _, fu := range st.Fusions {
		names = append(names, fu.EvidenceKernels...)
	}
	label := map[string]string{}
	for i, l := range kernelname.Labels(names) {
		label[names[i]] = l
	}
	evidence := func(fu TriageFusion, name func(string) string) string {
		ev := make([]string, len(fu.EvidenceKernels))
		for i, k := range fu.EvidenceKernels {
			ev[i] = name(k)
			if i < len(fu.EvidenceSharePct) {
				ev[i] += " (" + fmtPct(fu.EvidenceSharePct[i]) + ")"
			}
		}
		return strings.Join(ev, ", ")
	}
	for _, fu := range st.Fusions {
		row := []string{fu.Pattern, fu.Status, fu.Confidence, fmtDur(float64(fu.RelatedNS)),
			fmtPct(fu.SharePct), evidence(fu, func(s string) string { return s }), strings.Join(fu.Locations, "; "), fusedPaths(fu, !text), fu.Rationale}
		t.Rows = append(t.Rows, row)
		if text {
			narrow := slices.Clone(row)
			narrow[5] = evidence(fu, func(s string) string { return label[s] })
			t.Narrow = append(t.Narrow, narrow)
		}
	}
	return t
}
