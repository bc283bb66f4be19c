package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestRenderTimeline(t *testing.T) {
	t.Parallel()
	tl := Timeline{
		Title:   "rmsnorm under gemm",
		FromNS:  1_000_000,
		ToNS:    1_040_000, // 40 us: one column per us at width 40
		FocusID: 2,
		Events: []TimelineEvent{
			{KernelID: 1, Name: "gemm", Category: "compute", Stream: 7, HasStream: true, TSNS: 1_000_000, DurNS: 20_000},
			{KernelID: 2, Name: "rmsnorm", Category: "elementwise", Stream: 7, HasStream: true, TSNS: 1_020_000, DurNS: 6_000},
			{KernelID: 3, Name: "allreduce", Category: "communication", Stream: 20, HasStream: true, TSNS: 1_010_000, DurNS: 12_000},
			{KernelID: 4, Name: "memcpy", Category: "memory", HasStream: false, TSNS: 1_035_000, DurNS: 0},
		},
	}
	var b bytes.Buffer
	if err := RenderTimeline(&b, tl, 40); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"rmsnorm under gemm",
		"           window 40.0 us",
		"stream 7  |AAAAAAAAAAAAAAAAAAAACCCCCC              |",
		"stream 20 |          BBBBBBBBBBBB                  |",
		"stream ?  |                                   D    |",
		"           +---------+---------+---------+--------+",
		"           0.0     10.0      20.0      30.0    40.0 us",
		"A [compute] gemm (20.0 us)",
		"B [communication] allreduce (12.0 us)",
		"C [elementwise] rmsnorm (6.0 us)  <- longest instance",
		"D [memory] memcpy (0.0 us)",
		"",
	}, "\n")
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// More than eight events: only the eight longest get letters, the rest
// category marks, a legend line explains the marks, and the output is the
// same whatever order the events come in.
func TestRenderTimelineMarksAndDeterminism(t *testing.T) {
	t.Parallel()
	var events []TimelineEvent
	cats := []string{"compute", "communication", "elementwise", "memory", "other", ""}
	for i := range 14 {
		events = append(events, TimelineEvent{
			KernelID: int64(100 + i), Name: "k" + string(rune('a'+i)), Category: cats[i%len(cats)],
			Stream: int64(i % 3), HasStream: true, TSNS: int64(i * 7_000), DurNS: int64(1_000 + (i%5)*2_000),
		})
	}
	tl := Timeline{FromNS: 0, ToNS: 96_000, FocusID: 104, Events: events}
	var first bytes.Buffer
	if err := RenderTimeline(&first, tl, 0); err != nil {
		t.Fatal(err)
	}
	out := first.String()
	lines := strings.Split(out, "\n")
	// 3 streams, header, axis (2), 8 legend lines, mark legend, trailing "".
	if len(lines) != 1+3+2+8+1+1 {
		t.Fatalf("got %d lines:\n%s", len(lines), out)
	}
	if got := len(lines[1]); got != len("stream 0 |")+DefaultTimelineWidth+1 {
		t.Errorf("plot line is %d wide, want %d columns of plot:\n%s", got, DefaultTimelineWidth, out)
	}
	for _, want := range []string{"A [", "H [", "# compute  = communication", "<- longest instance"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "I [") {
		t.Errorf("more than eight letters:\n%s", out)
	}
	// The unlettered events here are compute, communication, other and
	// unclassified (drawn as other).
	for _, mark := range []string{"#", "=", "*"} {
		if !strings.Contains(strings.Join(lines[1:4], ""), mark) {
			t.Errorf("no %q mark among the streams:\n%s", mark, out)
		}
	}
	// Reversed input, same drawing.
	rev := append([]TimelineEvent(nil), events...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	tl.Events = rev
	var second bytes.Buffer
	if err := RenderTimeline(&second, tl, 0); err != nil {
		t.Fatal(err)
	}
	if second.String() != out {
		t.Errorf("order-dependent output:\n%s\nvs\n%s", out, second.String())
	}
	if err := RenderTimeline(&second, Timeline{FromNS: 5, ToNS: 5}, 10); err == nil {
		t.Error("empty window accepted")
	}
}
