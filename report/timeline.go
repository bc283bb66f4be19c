package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Timeline is one ASCII window around a kernel instance (triage.md section
// 4, --timeline): the events of one device, one line per stream.
type Timeline struct {
	// Title heads the drawing (e.g. the overlap row's kernel); may be empty.
	Title string
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
	span := t.ToNS - t.FromNS
	if span <= 0 {
		return fmt.Errorf("timeline %q: empty window [%d, %d)", t.Title, t.FromNS, t.ToNS)
	}

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
		fmt.Fprintf(&b, "%s\n", t.Title)
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
		fmt.Fprintf(&b, "%c [%s] %s (%s us)%s\n", letter[e.KernelID], e.Category, e.Name, formatUS(e.DurNS), focus)
	}
	if len(t.Events) > timelineLetters {
		b.WriteString("# compute  = communication  ~ elementwise  + memory  * other\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// formatUS prints nanoseconds as microseconds with one decimal.
func formatUS(ns int64) string {
	return fmt.Sprintf("%.1f", float64(ns)/1000)
}
