package report

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/kernelname"
	"github.com/tracehouse/tracehouse/vocab"
)

// The HTML view of a Document: one self-contained page (no request leaves
// it: the stylesheet and the table-sorting script are inline, pinned by a
// Content-Security-Policy that allows nothing else), the same sections as
// the markdown plus charts drawn as SVG in Go (svg.go). Every string from
// a trace goes through html/template's escaping; the page has no inline
// event handler and no template.HTML.

//go:embed html/report.html.tmpl html/report.css html/report.js
var htmlFiles embed.FS

var (
	// pageTemplate is parsed on first use: only the HTML view needs it,
	// and parsing it in the package's init was 2-3 ms of every command's
	// start (perf, issue 38).
	pageTemplate = sync.OnceValue(func() *template.Template {
		return template.Must(template.ParseFS(htmlFiles, "html/report.html.tmpl"))
	})
	pageCSS = mustRead("html/report.css")
	pageJS  = mustRead("html/report.js")
)

func mustRead(name string) string {
	b, err := htmlFiles.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// pageCSP allows the page's own stylesheet and script (by hash) and
// nothing else: no image, font, frame or connection can be loaded.
func pageCSP() string {
	h := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	return "default-src 'none'; style-src " + h(pageCSS) + "; script-src " + h(pageJS) +
		"; img-src 'none'; base-uri 'none'; form-action 'none'"
}

// HTMLOptions are the HTML view's choices.
type HTMLOptions struct {
	// TopKernels is how many kernels the per-stage bar chart shows (0: 10).
	TopKernels int
	// DeltaKernels is how many kernels the comparison's delta chart shows
	// (0: 15).
	DeltaKernels int
}

// RenderHTML writes d as one self-contained HTML page.
func RenderHTML(w io.Writer, d *Document, opt HTMLOptions) error {
	if opt.TopKernels <= 0 {
		opt.TopKernels = 10
	}
	if opt.DeltaKernels <= 0 {
		opt.DeltaKernels = 15
	}
	ew := &errWriter{w: w}
	if err := pageTemplate().ExecuteTemplate(ew, "page", newPage(d, opt)); err != nil {
		return err
	}
	return ew.err
}

// The page's view model: what the template shows, already formatted.
type page struct {
	Title   string
	Summary string
	Notes   []string
	CSP     string
	CSS     template.CSS // our stylesheet, a constant
	JS      template.JS  // our script, a constant
	TOC     []tocLine
	Models  []pageModel
	Compare *pageCompare
	History []pageHistory
}

type tocLine struct {
	Depth int
	Text  string
	ID    string
}

type pageModel struct {
	ID, Title  string
	Frameworks []pageFramework
}

type pageFramework struct {
	ID, Title string
	Runs      []pageRun
}

type pageRun struct {
	ID, Label string
	Header    []string
	Families  *scene
	Stages    []pageStage
}

type pageStage struct {
	ID, Title   string
	FamilyLine  string
	TopKernels  *scene
	Kernels     *pageTable
	KernelNotes []string
	// Spread and Launch are the kernel table's --wide columns, in tables of
	// their own beside it: in one table, 19 columns could not fit a page.
	Spread, Launch *pageTable
	// IdleBars and Idle are "Where the GPU waits": the step in parts per
	// scope, then the text view's lines and tables.
	IdleBars *scene
	// StepBars is a bar per step (its first steps), StepCaption says which.
	StepBars    *scene
	StepCaption string
	Idle        []pageBlock
	// Straggler is the late rank at collectives (every rank shown).
	Straggler  []pageBlock
	Overlap    *pageTable
	Timelines  []*scene
	Fusions    *pageTable
	Similarity string
}

type pageCompare struct {
	ID, Title    string
	Header       []string
	Stages       []pageCompareStage
	Verdict      string
	VerdictClass string
}

type pageCompareStage struct {
	ID, Title string
	Families  *scene
	Kernels   *scene
	Blocks    []pageBlock
}

// pageBlock is one block of a view's Doc: a heading, lines or a table.
type pageBlock struct {
	Heading string
	Lines   []string
	Table   *pageTable
}

// pageHistory is one history: its head lines, then per stage a line
// chart over the runs and the table of `tracehouse history`.
type pageHistory struct {
	ID, Title string
	Head      []string
	Stages    []pageHistoryStage
}

type pageHistoryStage struct {
	ID, Title string
	Chart     *scene
	Blocks    []pageBlock
}

type pageTable struct {
	Empty string
	// Wide tables have a name column: they take the section's width and
	// give it to the names.
	Wide bool
	Cols []pageCol
	Rows []pageRow
}

type pageCol struct {
	Name  string
	Class string
}

type pageRow struct {
	Class string
	Cells []pageCell
}

type pageCell struct {
	Text string
	// Full is the whole value when Text is shortened: the tooltip.
	Full string
	// Sort is the sort key when it is not the text: the full name, or a
	// time in ns (times adapt their unit from row to row).
	Sort  string
	Class string
	// More are the row's secondary columns, shown under its name.
	More []pageMore
}

// pageMore is one secondary column's value in a row's details.
type pageMore struct{ Name, Text string }

// tableNameChars bounds the lists of kernel names in HTML tables; the
// full list is on hover.
const tableNameChars = 72

// nameColumns hold kernel names; a Kernel column (Column.Kernel) does
// too.
var nameColumns = map[string]bool{"Kernel": true, "Evidence kernels": true}

// pageSecondary reports a column the page shows under its row's name
// rather than as a column of its own (issue 34 item 5): locations, prose
// and what a narrow terminal folds, so that no table is wider than the
// section at 1000 px and the names get the width.
func pageSecondary(c Column) bool {
	return c.Detail > 0 || c.Prose || c.Cut == CutPath || c.Cut == CutEnd
}

func newPage(d *Document, opt HTMLOptions) *page {
	p := &page{Title: d.Title, Summary: d.summary(), Notes: d.Notes, CSP: pageCSP(),
		CSS: template.CSS(pageCSS), JS: template.JS(pageJS)}
	for mi, m := range d.Models {
		pm := pageModel{ID: fmt.Sprintf("m%d", mi+1), Title: modelHeading(m.Model)}
		p.TOC = append(p.TOC, tocLine{0, pm.Title, pm.ID})
		for fi, f := range m.Frameworks {
			pf := pageFramework{ID: fmt.Sprintf("%s-f%d", pm.ID, fi+1), Title: f.Framework}
			p.TOC = append(p.TOC, tocLine{1, pf.Title, pf.ID})
			for _, r := range f.Runs {
				pr := newPageRun(r, opt)
				p.TOC = append(p.TOC, tocLine{2, r.Run, pr.ID})
				pf.Runs = append(pf.Runs, pr)
			}
			pm.Frameworks = append(pm.Frameworks, pf)
		}
		p.Models = append(p.Models, pm)
	}
	if c := d.Compare; c != nil {
		p.Compare = newPageCompare(c, opt)
		p.TOC = append(p.TOC, tocLine{0, p.Compare.Title, p.Compare.ID})
		for _, st := range p.Compare.Stages {
			p.TOC = append(p.TOC, tocLine{1, st.Title, st.ID})
		}
	}
	for i, h := range d.History {
		ph := newPageHistory(h, fmt.Sprintf("history-%d", i+1))
		p.TOC = append(p.TOC, tocLine{0, ph.Title, ph.ID})
		for _, st := range ph.Stages {
			p.TOC = append(p.TOC, tocLine{1, st.Title, st.ID})
		}
		p.History = append(p.History, ph)
	}
	return p
}

// newPageHistory lays out one history: the blocks of its text view, with
// each stage's chart above its table.
func newPageHistory(h *analysis.HistoryReport, id string) pageHistory {
	ph := pageHistory{ID: id, Title: HistoryTitle(h), Head: historyHeadLines(h)}
	if len(h.Stages) == 0 {
		ph.Head = append(ph.Head, historyEmptyLines(h)...)
	}
	for i := range h.Stages {
		st := &h.Stages[i]
		ps := pageHistoryStage{ID: id + "-" + st.Stage, Title: historyStageTitle(st), Chart: lineScene(HistoryChart(h, st))}
		ps.Blocks = pageBlocks(historyStageBlocks(h, st)[1:]) // its heading is the section's
		ph.Stages = append(ph.Stages, ps)
	}
	return ph
}

// pageBlocks turns a view's blocks (headings, lines, tables) into the
// page's.
func pageBlocks(blocks []any) []pageBlock {
	var out []pageBlock
	for _, b := range blocks {
		switch b := b.(type) {
		case *Heading:
			out = append(out, pageBlock{Heading: b.Text})
		case Lines:
			if len(b) > 0 {
				out = append(out, pageBlock{Lines: b})
			}
		case *Table:
			out = append(out, pageBlock{Table: newPageTable(b)})
		}
	}
	return out
}

func newPageRun(r *TriageReport, opt HTMLOptions) pageRun {
	id := "run-" + strconv.FormatInt(r.RunID, 10)
	pr := pageRun{ID: id, Label: r.Run, Header: r.headerLines()}
	var rows []stackRow
	for i := range r.Stages {
		st := &r.Stages[i]
		row := stackRow{Label: st.displayName}
		for _, f := range st.Families {
			row.Segs = append(row.Segs, stackSeg{Key: f.Family, Pct: f.SharePct,
				Title: fmt.Sprintf("%s, %s: %s of summed kernel time, %s ms, %d launches", st.displayName, f.Family,
					fmtPct(f.SharePct), fmtMS(f.GPUTimeNS), f.Launches)})
		}
		rows = append(rows, row)
		pr.Stages = append(pr.Stages, newPageStage(r, st, id, opt))
	}
	pr.Families = stackedBars("families", "Family shares of summed kernel time per stage, run "+r.Run, rows)
	return pr
}

func newPageStage(r *TriageReport, st *TriageStage, runID string, opt HTMLOptions) pageStage {
	rank := "all ranks"
	if st.Rank != nil {
		rank = "rank " + strconv.FormatInt(*st.Rank, 10)
	}
	ps := pageStage{ID: runID + "-" + st.Stage, Title: fmt.Sprintf("%s (%s)", st.displayName, rank), FamilyLine: r.familyLine(st)}
	var bars []barItem
	var names []string
	for i, k := range st.Kernels {
		if i < opt.TopKernels {
			names = append(names, k.Kernel)
		}
	}
	labels := kernelname.Labels(names)
	for i, k := range st.Kernels {
		if i >= opt.TopKernels {
			break
		}
		bars = append(bars, barItem{Name: k.Kernel, Label: labels[i], Value: float64(k.GPUTimeNS),
			ValueText: fmtMS(k.GPUTimeNS) + " ms · " + fmtPct(k.SharePct), Fill: familyColor(k.Family),
			Title: fmt.Sprintf("%s [%s] %s ms, %s of summed kernel time, %d launches", k.Kernel, k.Family,
				fmtMS(k.GPUTimeNS), fmtPct(k.SharePct), k.Launches)})
	}
	if len(bars) > 0 {
		ps.TopKernels = hBars("kernels", "Top kernels by GPU time, "+st.displayName, bars)
	}
	kt := r.kernelTable(st, Markdown)
	spread, launch := columnNames(spreadColumns()), columnNames(launchColumns())
	ps.Kernels = newPageTable(project(kt, func(c Column) bool { return !spread[c.Name] && !launch[c.Name] }))
	if len(st.Kernels) > 0 {
		if t := project(kt, func(c Column) bool { return c.Kernel || spread[c.Name] }); hasFigure(t) {
			ps.Spread = newPageTable(t)
		}
		// a run replayed by graphs has no launch of its own to show
		if t := project(kt, func(c Column) bool { return c.Kernel || launch[c.Name] }); hasFigure(t) {
			ps.Launch = newPageTable(t)
		}
	}
	ps.KernelNotes = kernelNotes(st)
	if l := launchLine(st); l != "" {
		ps.KernelNotes = append([]string{l}, ps.KernelNotes...)
	}
	if blocks := r.idleBlocks(st, Markdown); blocks != nil {
		ps.IdleBars = idleBars(st)
		if ps.StepBars = idleStepBars(st, r.Rank == nil); ps.StepBars != nil {
			ps.StepCaption = idleStepCaption(st, r.Rank == nil)
		}
		ps.Idle = pageBlocks(blocks)
	}
	ps.Straggler = pageBlocks(r.stragglerBlocks(st, Markdown))
	ps.Overlap = newPageTable(overlapTable(st, Markdown))
	for _, t := range r.windows[st.Stage] {
		ps.Timelines = append(ps.Timelines, timelineScene(t))
	}
	ps.Fusions = newPageTable(fusionTable(st, Markdown))
	if st.Similarity != nil {
		ps.Similarity = st.Similarity.Note
	}
	return ps
}

func newPageCompare(c *analysis.CompareReport, opt HTMLOptions) *pageCompare {
	pc := &pageCompare{ID: "compare", Title: "Comparison: " + c.Base.Label + " -> " + c.Candidate.Label,
		Header: compareHeadLines(c), Verdict: CompareVerdictLine(c), VerdictClass: strings.ReplaceAll(c.Verdict.Verdict, " ", "-")}
	for _, st := range c.Stages {
		if st.Absent != "" { // said in the header: nothing compared
			continue
		}
		ps := pageCompareStage{ID: "compare-" + st.Stage, Title: stageTitle(st, c.Gates.AllowUntested)}
		var fam []deltaItem
		for _, p := range st.Decomposition {
			fam = append(fam, deltaItem{Name: p.Component, Value: float64(p.DeltaNS), ValueText: signedUS(float64(p.DeltaNS)) + " µs",
				Title: fmt.Sprintf("%s: %s -> %s µs per step (%s µs)", p.Component, fmtUS3(p.BaseNS), fmtUS3(p.CandNS), signedUS(float64(p.DeltaNS)))})
		}
		if len(fam) > 0 {
			ps.Families = divergingBars("delta families", "Where the step-time delta went ("+st.DeltaStatistic+"), "+vocab.StageName(st.Stage), fam)
		}
		var ks []deltaItem
		shown := st.Kernels[:min(len(st.Kernels), opt.DeltaKernels)]
		var names []string
		for _, k := range shown {
			names = append(names, k.Kernel)
			if k.Bucket == analysis.BucketRenamed {
				names = append(names, k.BaseKernel)
			}
		}
		label := map[string]string{}
		for i, l := range kernelname.Labels(names) {
			label[names[i]] = l
		}
		for _, k := range shown {
			name, lbl := k.Kernel, label[k.Kernel]
			if k.Bucket == analysis.BucketRenamed {
				name, lbl = k.BaseKernel+" -> "+k.Kernel, label[k.BaseKernel]+" -> "+label[k.Kernel]
			}
			mark := fmtTest(k.Test)
			ks = append(ks, deltaItem{Name: name, Label: lbl, Value: k.DeltaNS, Muted: !k.Test.Significant,
				ValueText: signedUS(k.DeltaNS) + " µs " + mark,
				Title: fmt.Sprintf("%s [%s, %s] %s -> %s µs per step (%s, %s) %s", name, k.Bucket, k.Family, fmtUSf(k.Base.MedianNS),
					fmtUSf(k.Candidate.MedianNS), signedUS(k.DeltaNS), fmtDeltaPct(k.DeltaPct), mark)})
		}
		if len(ks) > 0 {
			ps.Kernels = divergingBars("delta kernels", "Kernel time per step, candidate minus base, "+vocab.StageName(st.Stage), ks)
		}
		ps.Blocks = pageBlocks(compareStageBlocks(st, false, c.Gates.AllowUntested)[1:]) // its heading is the section's
		pc.Stages = append(pc.Stages, ps)
	}
	return pc
}

// unitSpace is the space between a figure and its unit.
var unitSpace = regexp.MustCompile(`(\d) ([A-Za-zµ%]+)`)

// columnNames is the set of cols' names.
func columnNames(cols []Column) map[string]bool {
	m := map[string]bool{}
	for _, c := range cols {
		m[c.Name] = true
	}
	return m
}

// hasFigure says whether a cell outside t's name column holds a figure.
func hasFigure(t *Table) bool {
	for _, r := range t.Rows {
		for i, v := range r {
			if i < len(t.Columns) && !t.Columns[i].Kernel && v != "-" && v != "" {
				return true
			}
		}
	}
	return false
}

// project is t with only the columns keep admits, in their order.
func project(t *Table, keep func(Column) bool) *Table {
	var idx []int
	out := &Table{Name: t.Name, Empty: t.Empty}
	for i, c := range t.Columns {
		if keep(c) {
			idx = append(idx, i)
			out.Columns = append(out.Columns, c)
		}
	}
	pick := func(rows [][]string) [][]string {
		var o [][]string
		for _, r := range rows {
			var nr []string
			for _, i := range idx {
				if i < len(r) {
					nr = append(nr, r[i])
				}
			}
			o = append(o, nr)
		}
		return o
	}
	out.Rows, out.Narrow = pick(t.Rows), pick(t.Narrow)
	return out
}

func signedUS(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 1, 64) }

// newPageTable turns a view's table into the page's: kernel names shown
// by their labels (kernelname.Labels over the column; the full name on
// hover and as the sort key), secondary columns (pageSecondary) under the
// row's name, significance marks and gate verdicts classed for the
// stylesheet.
func newPageTable(t *Table) *pageTable {
	pt := &pageTable{Empty: t.Empty}
	isName := func(i int) bool { return t.Columns[i].Kernel || t.Columns[i].Name == "Kernel" }
	// where a row's secondary columns go: its names, else its first text
	// column, else its first
	home := -1
	for i, c := range t.Columns {
		if isName(i) {
			home = i
			break
		}
		if home < 0 && !c.Right && !pageSecondary(c) {
			home = i
		}
	}
	if home < 0 {
		home = 0
	}
	shown := make([]bool, len(t.Columns))
	for i, c := range t.Columns {
		shown[i] = i == home || !pageSecondary(c)
		if !shown[i] {
			continue
		}
		cls := ""
		switch {
		case c.Right:
			cls = "num"
		case isName(i):
			cls, pt.Wide = "name", true
		}
		pt.Cols = append(pt.Cols, pageCol{Name: c.Name, Class: cls})
	}
	// A comparison's renamed kernel is "base -> candidate" in its row
	// (kernel names may hold " -> " too: Memcpy HtoD (Pinned -> Device)).
	bucket := slices.IndexFunc(t.Columns, func(c Column) bool { return c.Name == "Bucket" })
	parts := func(r []string, i int) []string {
		if bucket >= 0 && bucket < len(r) && r[bucket] == analysis.BucketRenamed {
			if a, b, ok := strings.Cut(r[i], " -> "); ok {
				return []string{a, b}
			}
		}
		return []string{r[i]}
	}
	labels := make([]map[string]string, len(t.Columns))
	for i := range t.Columns {
		if !isName(i) {
			continue
		}
		var names []string
		for _, r := range t.Rows {
			if i < len(r) {
				names = append(names, parts(r, i)...)
			}
		}
		labels[i] = map[string]string{}
		for j, l := range kernelname.Labels(names) {
			labels[i][names[j]] = l
		}
	}
	for _, r := range t.Rows {
		var row pageRow
		var more []pageMore
		for i, v := range r {
			if i < len(t.Columns) && !shown[i] {
				if v != "" && v != "-" {
					more = append(more, pageMore{Name: t.Columns[i].Name, Text: v})
				}
				continue
			}
			cell := pageCell{Text: v}
			var col Column
			if i < len(t.Columns) {
				col = t.Columns[i]
			}
			num := ""
			if col.Right {
				num = "num"
			}
			switch {
			case i < len(t.Columns) && isName(i) && labels[i] != nil:
				ls := parts(r, i)
				for k, p := range ls {
					ls[k] = labels[i][p]
				}
				if l := strings.Join(ls, " -> "); l != v {
					cell.Text, cell.Full = l, v
				}
				cell.Sort, cell.Class = v, "name"
			case nameColumns[col.Name]:
				if s := shortenTo(v, tableNameChars); s != v {
					cell.Text, cell.Full, cell.Sort = s, v, v
				}
			case col.Name == "p" || col.Name == "p (BH)":
				cell.Class = significanceClass(v)
			case col.Name == "Gate" && v != "":
				cell.Class = "gate-" + v
				row.Class = "gate-" + v
			}
			if num != "" {
				cell.Sort = timeKey(v)
				// a figure keeps its unit, but a cell of two figures
				// ("15.7 ms 99.8%") may wrap between them
				cell.Text = unitSpace.ReplaceAllString(cell.Text, "$1\u00a0$2")
			}
			cell.Class = joinNonEmpty(" ", num, cell.Class)
			row.Cells = append(row.Cells, cell)
		}
		if len(more) > 0 {
			// home is the index among the shown columns too: no column
			// before it is secondary unless it is a name column's row
			k := 0
			for i := 0; i < home; i++ {
				if shown[i] {
					k++
				}
			}
			if k < len(row.Cells) {
				c := &row.Cells[k]
				c.More = more
				if c.Sort == "" {
					c.Sort = r[home] // the details are not the sort key
				}
			}
		}
		pt.Rows = append(pt.Rows, row)
	}
	return pt
}

// timeUnits are the units a time cell may carry, in ns.
var timeUnits = map[string]float64{"ns": 1, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}

// timeKey is a time cell's value in ns ("794 µs", "7.22 ms", "0.1 / 0.2 /
// 0.3 ms": the first number in the first unit), or "" when the cell is no
// time.
func timeKey(v string) string {
	f := strings.Fields(v)
	if len(f) < 2 {
		return ""
	}
	x, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return ""
	}
	for _, u := range f[1:] {
		if mul, ok := timeUnits[u]; ok {
			return strconv.FormatFloat(x*mul, 'g', -1, 64)
		}
	}
	return ""
}

// significanceClass classes a p cell (fmtTest): significant, not ("~"),
// or untested.
func significanceClass(v string) string {
	switch {
	case strings.HasPrefix(v, "~"):
		return "ns"
	case strings.HasPrefix(v, "too few"):
		return "untested"
	case strings.HasPrefix(v, "p"):
		return "sig"
	}
	return ""
}
