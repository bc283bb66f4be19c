package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/analysis"
)

// The charts of the HTML report, laid out in Go as scenes of SVG
// primitives; html/template draws them (report.html.tmpl, "svg"), so every
// label and tooltip taken from a trace is escaped like any other text and
// no chart needs a script. Coordinates are in the SVG's own units (the
// viewBox); CSS scales the drawing to the page.

// px is a coordinate, printed with at most one decimal so that the page
// stays small and byte-identical.
type px float64

func (p px) String() string {
	v := math.Round(float64(p)*10) / 10
	if v == 0 {
		v = 0 // no "-0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// scene is one chart.
type scene struct {
	// Kind is the chart's class (families, kernels, timeline, delta,
	// history); tests count charts by it.
	Kind  string
	Label string // aria-label
	W, H  px
	// Bars counts the data bars (rect.bar) drawn; the page carries it as
	// data-bars so a test can check what the browser shows.
	Bars    int
	Rects   []svgRect
	Lines   []svgLine
	Texts   []svgText
	Circles []svgCircle
	Polys   []svgPoly
}

type svgRect struct {
	X, Y, W, H px
	Class      string // "bar" for data bars
	Fill       string
	Title      string // tooltip
}

type svgLine struct {
	X1, Y1, X2, Y2 px
	Class          string
}

type svgText struct {
	X, Y   px
	Anchor string // start | middle | end
	Class  string
	Text   string
	// More are the lines the text wraps onto, each drawn lineH under
	// the one before (a long label wraps rather than be cut).
	More  []string
	Title string // the full text when Text is shortened
}

// lineH is the distance between the lines of a wrapped chart text (11 px
// type; report.html.tmpl draws each line after the first as a tspan
// dy="13").
const lineH = 13

type svgCircle struct {
	CX, CY, R px
	Class     string
	Title     string
}

type svgPoly struct {
	Points string
	Class  string
}

func (s *scene) bar(r svgRect) {
	r.Class = "bar " + r.Class
	s.Rects = append(s.Rects, r)
	s.Bars++
}

// familyOrder fixes each family's colour: every family the classifier
// gives (family_categories), in a fixed order.
var familyOrder = []string{"gemm", "attention", "moe", "hybrid_linear", "communication", "norm", "rope",
	"activation", "quantize", "softmax", "reduce_topk", "sampling", "elementwise", "kv_cache", "memcpy", "memset", "other"}

// familyPalette is a qualitative palette (Tableau 20 order), one colour
// per family of familyOrder; unknown families are grey.
var familyPalette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#8cd17d", "#e15759", "#b6992d", "#499894",
	"#86bcb6", "#f1ce63", "#d37295", "#fabfd2", "#b07aa1", "#d4a6c8", "#9d7660", "#79706e", "#bab0ac", "#a0cbe8"}

func familyColor(f string) string {
	if i := slices.Index(familyOrder, f); i >= 0 {
		return familyPalette[i]
	}
	return "#c7c7c7"
}

// categoryColor colours timeline events by category.
func categoryColor(c string) string {
	switch c {
	case "compute":
		return "#4e79a7"
	case "communication":
		return "#e15759"
	case "elementwise":
		return "#f28e2b"
	case "memory":
		return "#59a14f"
	}
	return "#bab0ac"
}

// categories in legend order.
var categories = []string{"compute", "communication", "elementwise", "memory", "other"}

const (
	chartW    = 960
	labelW    = 120 // row labels of stacked bars
	nameW     = 330 // kernel names of bar charts
	nameChars = 46  // bar labels longer than this wrap (6.5 px a character, at most 300 of nameW)
)

// shortenTo keeps the head and tail of s within n characters.
func shortenTo(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	tail := n / 3
	return string(r[:n-tail-1]) + "…" + string(r[len(r)-tail:])
}

// stackRow is one stacked bar: a label and its segments (shares in %).
type stackRow struct {
	Label string
	Segs  []stackSeg
}

type stackSeg struct {
	Key   string // family: colour and legend
	Pct   float64
	Title string
}

// stackedBars draws one 100% bar per row, segments in the given order,
// a text label on segments wide enough, and a legend of every key.
func stackedBars(kind, label string, rows []stackRow) *scene {
	return stackedBarsBy(kind, label, rows, familyColor)
}

// stackedBarsBy is stackedBars with segments coloured by color(key).
func stackedBarsBy(kind, label string, rows []stackRow, color func(string) string) *scene {
	return stackedBarsSized(kind, label, rows, color, 24, 10)
}

// stackedBarsSized is stackedBarsBy with bars rowH high, gap apart (thin
// bars for many rows: no text inside a bar under 20 px).
func stackedBarsSized(kind, label string, rows []stackRow, color func(string) string, rowH, gap float64) *scene {
	const top = 6
	s := &scene{Kind: kind, Label: label, W: chartW}
	barW := float64(chartW - labelW - 8)
	y := float64(top)
	var keys []string
	for _, r := range rows {
		s.Texts = append(s.Texts, svgText{X: labelW - 8, Y: px(y + rowH/2 + 4), Anchor: "end", Class: "lbl", Text: r.Label})
		total := 0.0
		for _, g := range r.Segs {
			total += max(g.Pct, 0)
		}
		x := float64(labelW)
		for _, g := range r.Segs {
			if !slices.Contains(keys, g.Key) {
				keys = append(keys, g.Key)
			}
			if total <= 0 {
				continue
			}
			w := max(g.Pct, 0) / total * barW
			s.bar(svgRect{X: px(x), Y: px(y), W: px(w), H: px(rowH), Class: "seg", Fill: color(g.Key), Title: g.Title})
			if w >= 64 && rowH >= 20 {
				s.Texts = append(s.Texts, svgText{X: px(x + 4), Y: px(y + rowH/2 + 4), Class: "in", Text: fmt.Sprintf("%s %.0f%%", g.Key, g.Pct)})
			}
			x += w
		}
		y += rowH + gap
	}
	y = legend(s, y, keys, color)
	s.H = px(y)
	return s
}

// legend lays out swatches and names in rows under a chart and returns
// the height used.
func legend(s *scene, y float64, keys []string, color func(string) string) float64 {
	x := float64(labelW)
	y += 2
	for _, k := range keys {
		w := float64(len([]rune(k)))*7 + 28
		if x+w > chartW {
			x = labelW
			y += 18
		}
		s.Rects = append(s.Rects, svgRect{X: px(x), Y: px(y), W: 10, H: 10, Class: "sw", Fill: color(k)})
		s.Texts = append(s.Texts, svgText{X: px(x + 14), Y: px(y + 9), Class: "leg", Text: k})
		x += w
	}
	return y + 18
}

// barItem is one horizontal bar.
type barItem struct {
	Name string // full name: the tooltip, and the label when Label is ""
	// Label is what the chart shows (a kernel's label: kernelname.Labels
	// over the chart's names).
	Label     string
	Value     float64
	ValueText string
	Fill      string
	Title     string
}

// barLabels are the labels of one chart's bars, each item's label (its
// name when it has none) wrapped into lines of at most nameChars: at
// spaces, a long name after a '_', ',' or ':' (wrapWith), never cut, so
// labels that differ stay different. The full name is on hover when the
// label is not it.
func barLabels(names, labels []string) [][]string {
	out := make([][]string, len(names))
	for i := range names {
		l := labels[i]
		if l == "" {
			l = names[i]
		}
		out[i] = wrapWith(l, nameChars, "")
	}
	return out
}

// barRows lays out one bar per label left of it, rows rowH high gap
// apart, a wrapped label's row as high as its lines: the top of each
// row, the height used, and the labels' texts.
func barRows(names, labels []string, rowH, gap, top float64) ([]float64, float64, []svgText) {
	lines := barLabels(names, labels)
	ys := make([]float64, len(names))
	var texts []svgText
	y := top
	for i, ls := range lines {
		ys[i] = y
		t := svgText{X: nameW - 8, Y: px(y + rowH - 4), Anchor: "end", Class: "lbl", Text: ls[0], More: ls[1:]}
		if l := labels[i]; l != "" && l != names[i] || len(ls) > 1 {
			t.Title = names[i]
		}
		texts = append(texts, t)
		y += max(rowH, rowH+float64(len(ls)-1)*lineH) + gap
	}
	return ys, y, texts
}

// hBars draws one bar per item, longest first as given, scaled to the
// largest value, the name left of the bar and the value after it.
func hBars(kind, label string, items []barItem) *scene {
	const rowH, gap, top = 16, 6, 4
	s := &scene{Kind: kind, Label: label, W: chartW}
	barW := float64(chartW - nameW - 150)
	top1 := 0.0
	for _, it := range items {
		top1 = max(top1, it.Value)
	}
	names, labels := make([]string, len(items)), make([]string, len(items))
	for i, it := range items {
		names[i], labels[i] = it.Name, it.Label
	}
	ys, end, texts := barRows(names, labels, rowH, gap, top)
	s.Texts = append(s.Texts, texts...)
	for i, it := range items {
		w := 0.0
		if top1 > 0 {
			w = max(it.Value, 0) / top1 * barW
		}
		y := ys[i]
		s.bar(svgRect{X: nameW, Y: px(y), W: px(max(w, 1)), H: rowH, Fill: it.Fill, Title: it.Title})
		s.Texts = append(s.Texts, svgText{X: px(nameW + w + 6), Y: px(y + rowH - 4), Class: "val", Text: it.ValueText})
	}
	s.H = px(end + top)
	return s
}

// deltaItem is one signed bar: a delta, where positive means slower.
type deltaItem struct {
	Name      string
	Label     string // shown instead of Name when set (see barItem)
	Value     float64
	ValueText string
	// Muted bars are not significant (or untested): drawn faded, and the
	// value carries the mark.
	Muted bool
	Title string
}

// divergingBars draws bars left (faster, green) and right (slower, red) of
// a zero line, scaled to the largest magnitude.
func divergingBars(kind, label string, items []deltaItem) *scene {
	const rowH, gap, top = 16, 6, 4
	s := &scene{Kind: kind, Label: label, W: chartW}
	half := float64(chartW-nameW-20) / 2
	zero := float64(nameW) + half
	top1 := 0.0
	for _, it := range items {
		top1 = max(top1, math.Abs(it.Value))
	}
	names, labels := make([]string, len(items)), make([]string, len(items))
	for i, it := range items {
		names[i], labels[i] = it.Name, it.Label
	}
	ys, end, texts := barRows(names, labels, rowH, gap, top)
	s.Texts = append(s.Texts, texts...)
	for i, it := range items {
		y := ys[i]
		w := 0.0
		if top1 > 0 {
			w = math.Abs(it.Value) / top1 * (half - 130) // room for the value
		}
		cls, x := "up", zero
		if it.Value < 0 {
			cls, x = "down", zero-w
		}
		if it.Muted {
			cls += " muted"
		}
		s.bar(svgRect{X: px(x), Y: px(y), W: px(max(w, 1)), H: rowH, Class: cls, Title: it.Title})
		vt := svgText{X: px(zero + w + 6), Y: px(y + rowH - 4), Class: "val", Text: it.ValueText}
		if it.Value < 0 {
			vt.X, vt.Anchor = px(zero-w-6), "end"
		}
		s.Texts = append(s.Texts, vt)
	}
	s.Lines = append(s.Lines, svgLine{X1: px(zero), Y1: 0, X2: px(zero), Y2: px(end), Class: "zero"})
	s.H = px(end + top)
	return s
}

// timelineScene draws a window of GPU events, one lane per stream
// (ascending, events without a stream last), the instance of interest
// outlined, an axis in µs from the window's start and a category legend.
func timelineScene(t Timeline) *scene {
	const laneH, gap, top, laneLabel = 18, 4, 4, 90
	s := &scene{Kind: "timeline", Label: t.Title, W: chartW}
	span := float64(t.ToNS - t.FromNS)
	if span <= 0 {
		return s
	}
	plotW := float64(chartW - laneLabel - 16)
	type lane struct {
		stream    int64
		hasStream bool
	}
	var lanes []lane
	for _, e := range t.Events {
		l := lane{e.Stream, e.HasStream}
		if !slices.Contains(lanes, l) {
			lanes = append(lanes, l)
		}
	}
	slices.SortFunc(lanes, func(a, b lane) int {
		if a.hasStream != b.hasStream {
			if a.hasStream {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.stream, b.stream)
	})
	xOf := func(ns int64) float64 {
		return laneLabel + math.Min(math.Max(float64(ns-t.FromNS)/span, 0), 1)*plotW
	}
	events := slices.Clone(t.Events)
	// The focus instance last, so that its outline is on top.
	slices.SortStableFunc(events, func(a, b TimelineEvent) int {
		return cmp.Compare(boolInt(a.KernelID == t.FocusID), boolInt(b.KernelID == t.FocusID))
	})
	var cats []string
	for i, l := range lanes {
		y := float64(top + i*(laneH+gap))
		name := "stream ?"
		if l.hasStream {
			name = "stream " + strconv.FormatInt(l.stream, 10)
		}
		s.Texts = append(s.Texts, svgText{X: laneLabel - 8, Y: px(y + laneH - 5), Anchor: "end", Class: "lbl", Text: name})
		s.Rects = append(s.Rects, svgRect{X: laneLabel, Y: px(y), W: px(plotW), H: laneH, Class: "lane"})
		for _, e := range events {
			if (lane{e.Stream, e.HasStream}) != l {
				continue
			}
			if !slices.Contains(cats, e.Category) {
				cats = append(cats, e.Category)
			}
			x0, x1 := xOf(e.TSNS), xOf(e.TSNS+e.DurNS)
			cls := "ev"
			title := fmt.Sprintf("%s [%s] %s us, starts at %s us", e.Name, e.Category, fmtUS(e.DurNS), fmtUS(e.TSNS-t.FromNS))
			if e.KernelID == t.FocusID {
				cls, title = "ev focus", title+" (longest instance)"
			}
			s.bar(svgRect{X: px(x0), Y: px(y + 1), W: px(max(x1-x0, 0.6)), H: laneH - 2, Class: cls, Fill: categoryColor(e.Category), Title: title})
			if chars := int((x1 - x0 - 6) / 6); chars >= 8 {
				s.Texts = append(s.Texts, svgText{X: px(x0 + 3), Y: px(y + laneH - 5), Class: "in", Text: shortenTo(e.Name, chars)})
			}
		}
	}
	y := float64(top + len(lanes)*(laneH+gap))
	s.Lines = append(s.Lines, svgLine{X1: laneLabel, Y1: px(y), X2: px(laneLabel + plotW), Y2: px(y), Class: "axis"})
	for q := 0; q <= 4; q++ {
		x := laneLabel + plotW*float64(q)/4
		s.Lines = append(s.Lines, svgLine{X1: px(x), Y1: px(y), X2: px(x), Y2: px(y + 4), Class: "axis"})
		anchor := "middle"
		switch q {
		case 0:
			anchor = "start"
		case 4:
			anchor = "end"
		}
		v := strconv.FormatFloat(span*float64(q)/4/1000, 'f', 1, 64)
		if q == 4 {
			v += " µs"
		}
		s.Texts = append(s.Texts, svgText{X: px(x), Y: px(y + 16), Anchor: anchor, Class: "tick", Text: v})
	}
	var legendCats []string
	for _, c := range categories {
		if slices.Contains(cats, c) {
			legendCats = append(legendCats, c)
		}
	}
	for _, c := range cats {
		if !slices.Contains(legendCats, c) {
			legendCats = append(legendCats, c)
		}
	}
	s.H = px(legend(s, y+22, legendCats, categoryColor))
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tickCharW is the width of a character of a tick label (11 px
// system-ui), to keep labels inside the chart.
const tickCharW = 6.5

// roundTicks are about n+1 values on 1-2-5 steps from at most lo to at
// least hi, and the decimals their labels need.
func roundTicks(lo, hi float64, n int) ([]float64, int) {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []float64{lo, lo + 1}, 0
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	first := math.Floor(lo/step+1e-9) * step
	var ticks []float64
	for k := 0; ; k++ {
		// k*step from first: no drift from repeated addition
		v := first + float64(k)*step
		ticks = append(ticks, v)
		if v >= hi-1e-9*step {
			break
		}
	}
	dec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	for i, v := range ticks {
		// round away the float noise (0.30000000000000004)
		p := math.Pow(10, float64(dec))
		ticks[i] = math.Round(v*p) / p
	}
	return ticks, dec
}

// lineScene draws a series over runs: the values joined by a line, their
// intervals as whiskers, change points ringed (red when slower, green when
// faster) with an arrow above, run labels under the axis. Bars counts the
// points (circle.pt), so a test can check what the browser shows.
func lineScene(c LineChart) *scene {
	// top leaves room for the unit and the change arrows; inset keeps the
	// first and last points (and their centred labels) off the chart's
	// edges.
	const top, plotH, left, bottom, inset = 26, 180, 70, 60, 50
	s := &scene{Kind: "history", Label: c.Title, W: chartW}
	n := len(c.Points)
	if n == 0 {
		s.H = top
		return s
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range c.Points {
		if p.Absent {
			continue
		}
		lo, hi = math.Min(lo, p.Value), math.Max(hi, p.Value)
		if p.Lo != nil && p.Hi != nil {
			lo, hi = math.Min(lo, *p.Lo), math.Max(hi, *p.Hi)
		}
	}
	if math.IsInf(lo, 1) { // every run absent
		lo, hi = 0, 1
	}
	positive := lo >= 0
	if lo > 0 && lo < hi/2 {
		lo = 0
	}
	if hi == lo {
		hi, lo = hi+1, lo-1
	}
	pad := (hi - lo) * 0.08
	lo, hi = lo-pad, hi+pad
	if positive {
		lo = math.Max(lo, 0) // no negative times on the axis
	}
	// The axis runs from one round tick to another (1-2-5 steps), so its
	// labels read 9000, 10000, ... rather than 8776.0, 12505.2.
	ticks, dec := roundTicks(lo, hi, 4)
	lo, hi = ticks[0], ticks[len(ticks)-1]
	plotW := float64(chartW - left - 20)
	xOf := func(i int) float64 {
		if n == 1 {
			return left + plotW/2
		}
		return left + inset + (plotW-2*inset)*float64(i)/float64(n-1)
	}
	yOf := func(v float64) float64 { return top + (hi-v)/(hi-lo)*plotH }
	s.Lines = append(s.Lines, svgLine{X1: left, Y1: top, X2: left, Y2: top + plotH, Class: "axis"},
		svgLine{X1: left, Y1: top + plotH, X2: px(left + plotW), Y2: top + plotH, Class: "axis"})
	for _, v := range ticks {
		y := yOf(v)
		s.Lines = append(s.Lines, svgLine{X1: left, Y1: px(y), X2: px(left + plotW), Y2: px(y), Class: "grid"})
		s.Texts = append(s.Texts, svgText{X: left - 6, Y: px(y + 4), Anchor: "end", Class: "tick", Text: strconv.FormatFloat(v, 'f', dec, 64)})
	}
	// The line breaks at an absent run: one polyline per run of values.
	pts := ""
	flush := func() {
		if pts != "" {
			s.Polys = append(s.Polys, svgPoly{Points: pts, Class: "series"})
		}
		pts = ""
	}
	// A run's label wraps after a '-', '_', '.' or '/' into lines as
	// wide as the room between two labelled points (at most
	// maxLabelLines of them; only a label longer than that is cut, at
	// its end). Every point is labelled up to 12 points, and while the
	// longest part of a label between two separators fits that room;
	// else every second point, or third, ...
	longest := 0
	for _, p := range c.Points {
		for _, seg := range labelSegments(p.Run) {
			longest = max(longest, len([]rune(seg)))
		}
	}
	roomOf := func(every int) int {
		if n < 2 {
			return 24
		}
		return min(24, max(8, int((plotW-2*inset)/float64(n-1)*float64(every)/tickCharW)-1))
	}
	every := max(1, (n+11)/12)
	for every < n-1 && roomOf(every) < min(longest, 24) {
		every++
	}
	room := roomOf(every)
	labelLines := 1
	for i, p := range c.Points {
		x, y := xOf(i), yOf(p.Value)
		label := func() {
			if i%every == 0 || p.Change != "" {
				lines := wrapLabel(p.Run, room)
				if len(lines) > maxLabelLines {
					lines = lines[:maxLabelLines]
					lines[maxLabelLines-1] = cutEnd(lines[maxLabelLines-1]+"…", room)
				}
				labelLines = max(labelLines, len(lines))
				t := svgText{X: px(x), Y: top + plotH + 16, Anchor: "middle", Class: "tick", Text: lines[0], More: lines[1:]}
				// a label centred near an edge would be clipped: it
				// starts (or ends) there instead
				wide := 0
				for _, l := range lines {
					wide = max(wide, len([]rune(l)))
				}
				if half := float64(wide) * tickCharW / 2; x-half < 2 {
					t.X, t.Anchor = 2, "start"
				} else if x+half > chartW-2 {
					t.X, t.Anchor = chartW-2, "end"
				}
				if len(lines) > 1 {
					t.Title = p.Run
				}
				s.Texts = append(s.Texts, t)
			}
		}
		if p.Absent {
			flush()
			s.Texts = append(s.Texts, svgText{X: px(x), Y: top + plotH - 6, Anchor: "middle", Class: "tick absent", Text: "absent",
				Title: p.Run + ": absent (no value in this series)"})
			label()
			continue
		}
		if pts != "" {
			pts += " "
		}
		pts += px(x).String() + "," + px(y).String()
		if p.Lo != nil && p.Hi != nil {
			s.Lines = append(s.Lines, svgLine{X1: px(x), Y1: px(yOf(*p.Hi)), X2: px(x), Y2: px(yOf(*p.Lo)), Class: "ci"})
		}
		title := fmt.Sprintf("%s: %s %s", p.Run, strconv.FormatFloat(p.Value, 'f', 1, 64), c.Unit)
		cls := "pt"
		if p.Change != "" {
			cls, title = "pt change "+p.Change, title+" (change point: "+p.Change+")"
		}
		s.Circles = append(s.Circles, svgCircle{CX: px(x), CY: px(y), R: 3.5, Class: cls, Title: title})
		s.Bars++
		if p.Change != "" {
			s.Circles = append(s.Circles, svgCircle{CX: px(x), CY: px(y), R: 8, Class: "ring " + p.Change, Title: title})
			arrow := "▲"
			if p.Change == analysis.ChangeFaster {
				arrow = "▼"
			}
			s.Texts = append(s.Texts, svgText{X: px(x), Y: px(y - 12), Anchor: "middle", Class: "mark " + p.Change, Text: arrow})
		}
		label()
	}
	flush()
	unit := c.Unit
	if lo > 0 {
		// say so when the axis does not start at zero
		unit += " (axis starts at " + strconv.FormatFloat(lo, 'f', dec, 64) + ")"
	}
	s.Texts = append(s.Texts, svgText{X: 4, Y: 12, Class: "tick", Text: unit})
	s.H = px(top + plotH + bottom - 20 + float64(labelLines-1)*lineH)
	return s
}

// maxLabelLines is the most lines a history chart's run label wraps onto.
const maxLabelLines = 3

// labelSegments splits a run label after each '-', '_', '.' or '/': the
// places it may wrap.
func labelSegments(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if strings.ContainsRune("-_./", r) {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// wrapLabel packs a label's segments into lines of at most room
// characters; a segment longer than that is broken where the line ends.
func wrapLabel(s string, room int) []string {
	var out []string
	line := ""
	for _, seg := range labelSegments(s) {
		if line != "" && len([]rune(line))+len([]rune(seg)) > room {
			out = append(out, line)
			line = ""
		}
		line += seg
		for len([]rune(line)) > room {
			r := []rune(line)
			out = append(out, string(r[:room]))
			line = string(r[room:])
		}
	}
	if line != "" || len(out) == 0 {
		out = append(out, line)
	}
	return out
}
