package report

import (
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/analysis"
)

// TestHistoryAbsentGap (issue 33 item 2): an absent run is a gap in the
// table ("absent", no 0) and in the chart (the line breaks, no point).
func TestHistoryAbsentGap(t *testing.T) {
	t.Parallel()
	v := func(x float64) *float64 { return &x }
	h := &analysis.HistoryReport{What: "k per step", Stages: []analysis.HistoryStage{{Stage: "decode", Runs: []analysis.HistoryPoint{
		{Order: 1, Label: "a", Steps: 6, MedianNS: v(100e3), MedianUS: v(100)},
		{Order: 2, Label: "b", Steps: 6, MedianNS: v(101e3), MedianUS: v(101)},
		{Order: 3, Label: "gone", Steps: 6, Absent: analysis.AbsentNoKernel},
		{Order: 4, Label: "c", Steps: 6, MedianNS: v(99e3), MedianUS: v(99)},
	}}}}
	c := HistoryChart(h, &h.Stages[0])
	if len(c.Points) != 4 || !c.Points[2].Absent || c.Points[2].Value != 0 {
		t.Fatalf("points %+v", c.Points)
	}
	s := lineScene(c)
	if len(s.Polys) != 2 || strings.Count(s.Polys[0].Points, ",") != 2 || strings.Count(s.Polys[1].Points, ",") != 1 {
		t.Errorf("polylines %+v, want a-b and c", s.Polys)
	}
	pts, absent := 0, 0
	for _, ci := range s.Circles {
		if ci.Class == "pt" {
			pts++
		}
	}
	for _, tx := range s.Texts {
		if tx.Text == "absent" {
			absent++
		}
	}
	if pts != 3 || absent != 1 {
		t.Errorf("%d points and %d absent marks, want 3 and 1", pts, absent)
	}
	var b strings.Builder
	if err := Render(&b, Text, HistoryDoc(h, Text)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "decode: 4 run(s), 1 absent") || !strings.Contains(out, "absent") ||
		strings.Contains(out, " 0.0 ") {
		t.Errorf("text:\n%s", out)
	}
}
