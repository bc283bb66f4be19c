package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tracehouse/tracehouse/kernelname"
)

// Timeline is one ASCII window around a kernel instance (triage
// --timeline): the events of one device, one line per stream.
type Timeline struct {
	// Title heads the drawing (e.g. the overlap row's kernel); may be empty.
	Title string
	// Kernel is the kernel name inside Title, shown by its label when the
	// drawing is fitted to a terminal.
	Kernel string
	// FromNS and ToNS bound the window (absolute ns); ToNS > FromNS.
	FromNS, ToNS int64
	// FocusID is the instance's kernel_id, flagged in the legend.
	FocusID int64
	Events  []TimelineEvent
}

// TimelineEvent is one GPU event in the window.
type TimelineEvent struct {
	KernelID int64
	Name     string
	Category string
	// Stream labels the event's line; HasStream false draws it on "stream ?".
	Stream    int64
	HasStream bool
	TSNS      int64
	DurNS     int64
}

// DefaultTimelineWidth is the number of plot columns when width <= 0.
const DefaultTimelineWidth = 96

// timelineLetters is how many of the longest events get a letter.
const timelineLetters = 8

// categoryMark is the mark of an event without a letter.
func categoryMark(category string) byte {
	switch category {
	case "compute":
		return '#'
	case "communication":
		return '='
	case "elementwise":
		return '~'
	case "memory":
		return '+'
	}
	return '*'
}

// RenderTimeline draws t in width plot columns (DefaultTimelineWidth when
// width <= 0): a line per stream (ascending, the stream-less line last), the
// eight longest events as letters A, B, ... (A the longest; ties by start,
// then kernel_id) with a legend, the others as category marks, and a time
// axis with marks at 0, 1/4, 1/2, 3/4 and the end of the window, in µs
// from its start. Output depends only on t and width.
func RenderTimeline(w io.Writer, t Timeline, width int) error {
	if width <= 0 {
		width = DefaultTimelineWidth
	}
	if t.ToNS <= t.FromNS {
		return fmt.Errorf("timeline %q: empty window [%d, %d)", t.Title, t.FromNS, t.ToNS)
	}
	_, err := io.WriteString(w, strings.Join(drawTimeline(t, width, 0), "\n")+"\n")
	return err
}

// timelineLabelWidth is the width of the stream labels left of the plot.
func timelineLabelWidth(t Timeline) int {
	w := len("stream ?")
	for _, e := range t.Events {
		if e.HasStream {
			w = max(w, len(fmt.Sprintf("stream %d", e.Stream)))
		}
	}
	return w
}

// timelineLines draws t for a terminal of width columns: the plot as wide
// as fits (at most DefaultTimelineWidth), kernel names by their labels
// among the window's kernels, legend lines cut to the width. Width 0 draws
// it whole, names as written.
func timelineLines(t Timeline, width int) []string {
	if t.ToNS <= t.FromNS {
		return []string{fmt.Sprintf("(timeline %q: empty window)", t.Title)}
	}
	if width <= 0 {
		return drawTimeline(t, DefaultTimelineWidth, 0)
	}
	names := make([]string, 0, len(t.Events)+1)
	for _, e := range t.Events {
		names = append(names, e.Name)
	}
	names = append(names, t.Kernel)
	labels := kernelname.Labels(names)
	label := map[string]string{}
	for i, l := range labels {
		label[names[i]] = l
	}
	t.Events = slices.Clone(t.Events)
	for i := range t.Events {
		t.Events[i].Name = label[t.Events[i].Name]
	}
	if t.Kernel != "" {
		t.Title = strings.Replace(t.Title, t.Kernel, label[t.Kernel], 1)
	}
	// "stream 7 |" + plot + "|", and the axis labels one column wider + " us"
	plot := min(DefaultTimelineWidth, width-timelineLabelWidth(t)-5)
	if plot < 16 {
		plot = 16
	}
	return drawTimeline(t, plot, width)
}

// drawTimeline is the drawing of RenderTimeline, its legend's kernel names
// cut so each line fits lineWidth (0: whole).
func drawTimeline(t Timeline, width, lineWidth int) []string {
	span := t.ToNS - t.FromNS

	// Letters go to the longest events.
	byLength := slices.Clone(t.Events)
	slices.SortStableFunc(byLength, func(a, b TimelineEvent) int {
		return cmp.Or(cmp.Compare(b.DurNS, a.DurNS), cmp.Compare(a.TSNS, b.TSNS), cmp.Compare(a.KernelID, b.KernelID))
	})
	letter := map[int64]byte{}
	for i, e := range byLength[:min(timelineLetters, len(byLength))] {
		letter[e.KernelID] = byte('A' + i)
	}

	// One line per stream.
	type line struct {
		label string
		key   [2]int64 // (has no stream, stream) sorts the stream-less line last
		cells []byte
	}
	lines := map[[2]int64]*line{}
	lineOf := func(e TimelineEvent) *line {
		key := [2]int64{0, e.Stream}
		label := fmt.Sprintf("stream %d", e.Stream)
		if !e.HasStream {
			key, label = [2]int64{1, 0}, "stream ?"
		}
		l := lines[key]
		if l == nil {
			l = &line{label: label, key: key, cells: []byte(strings.Repeat(" ", width))}
			lines[key] = l
		}
		return l
	}
	// cell maps a time to a column; an event covers the columns its interval
	// touches, at least one.
	cell := func(ns int64) int { return int((ns - t.FromNS) * int64(width) / span) }
	paint := func(e TimelineEvent, mark byte) {
		l := lineOf(e)
		first := max(0, cell(e.TSNS))
		last := min(width-1, cell(e.TSNS+e.DurNS-1))
		if e.DurNS <= 0 {
			last = first
		}
		for c := first; c <= last && c < width; c++ {
			l.cells[c] = mark
		}
	}
	// Marks first (in time order), letters on top, A last so it stays visible.
	inTime := slices.Clone(t.Events)
	slices.SortStableFunc(inTime, func(a, b TimelineEvent) int {
		return cmp.Or(cmp.Compare(a.TSNS, b.TSNS), cmp.Compare(a.KernelID, b.KernelID))
	})
	for _, e := range inTime {
		if _, ok := letter[e.KernelID]; !ok {
			paint(e, categoryMark(e.Category))
		}
	}
	for i := min(timelineLetters, len(byLength)) - 1; i >= 0; i-- {
		paint(byLength[i], letter[byLength[i].KernelID])
	}

	ordered := make([]*line, 0, len(lines))
	for _, l := range lines {
		ordered = append(ordered, l)
	}
	slices.SortFunc(ordered, func(a, b *line) int {
		return cmp.Or(cmp.Compare(a.key[0], b.key[0]), cmp.Compare(a.key[1], b.key[1]))
	})
	labelWidth := len("stream ?")
	for _, l := range ordered {
		labelWidth = max(labelWidth, len(l.label))
	}

	var b strings.Builder
	if t.Title != "" {
		for _, l := range wrapLine(t.Title, lineWidth) {
			fmt.Fprintf(&b, "%s\n", l)
		}
	}
	fmt.Fprintf(&b, "%-*s  window %s us\n", labelWidth, "", formatUS(span))
	for _, l := range ordered {
		fmt.Fprintf(&b, "%-*s |%s|\n", labelWidth, l.label, l.cells)
	}
	// Axis: ticks at 0, 1/4, 1/2, 3/4 and the end of the window.
	// The tick line starts under the left border; a quarter's tick sits on
	// the cell holding that instant.
	ticks := []byte(" " + strings.Repeat("-", width))
	labels := []byte(strings.Repeat(" ", width+2+16))
	for q := 0; q <= 4; q++ {
		col := 1 + min(width-1, q*width/4)
		ticks[col] = '+'
		text := formatUS(span * int64(q) / 4)
		start := col - len(text)/2
		if q == 0 {
			start = col
		} else if q == 4 {
			start = col - len(text) + 1
		}
		copy(labels[max(0, start):], text)
	}
	fmt.Fprintf(&b, "%-*s %s\n", labelWidth, "", ticks)
	fmt.Fprintf(&b, "%-*s %s us\n", labelWidth, "", strings.TrimRight(string(labels), " "))
	for _, e := range byLength[:min(timelineLetters, len(byLength))] {
		focus := ""
		if e.KernelID == t.FocusID {
			focus = "  <- longest instance"
		}
		head := fmt.Sprintf("%c [%s] ", letter[e.KernelID], e.Category)
		tail := fmt.Sprintf(" (%s us)%s", formatUS(e.DurNS), focus)
		name := e.Name
		if lineWidth > 0 {
			name = cutMiddle(escapeControl(name), max(8, lineWidth-textWidth(head)-textWidth(tail)))
		}
		fmt.Fprintf(&b, "%s%s%s\n", head, name, tail)
	}
	if len(t.Events) > timelineLetters {
		for _, l := range wrapLine("# compute  = communication  ~ elementwise  + memory  * other", lineWidth) {
			fmt.Fprintf(&b, "%s\n", l)
		}
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// formatUS prints nanoseconds as microseconds with one decimal.
func formatUS(ns int64) string {
	return fmt.Sprintf("%.1f", float64(ns)/1000)
}
