package report

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/stats"
)

func TestReportPx(t *testing.T) {
	for v, want := range map[float64]string{0: "0", -0.01: "0", 1.25: "1.3", 12: "12", 3.14159: "3.1", -2.06: "-2.1"} {
		if got := px(v).String(); got != want {
			t.Errorf("px(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestReportStackedBars: each row's segments tile the bar exactly, in the
// given order, one data bar per segment.
func TestReportStackedBars(t *testing.T) {
	s := stackedBars("families", "x", []stackRow{
		{Label: "prefill", Segs: []stackSeg{{Key: "gemm", Pct: 54}, {Key: "attention", Pct: 25}, {Key: "other", Pct: 21}}},
		{Label: "decode", Segs: []stackSeg{{Key: "gemm", Pct: 99.9}, {Key: "memset", Pct: 0}}},
	})
	if s.Bars != 5 {
		t.Fatalf("%d bars, want 5", s.Bars)
	}
	barW := float64(chartW - labelW - 8)
	rows := map[px]float64{}
	var bars []svgRect
	for _, r := range s.Rects {
		if strings.HasPrefix(r.Class, "bar") {
			bars = append(bars, r)
			rows[r.Y] += float64(r.W)
		}
	}
	for y, w := range rows {
		if math.Abs(w-barW) > 0.01 {
			t.Errorf("row at y=%v: segments cover %.2f, want %.2f", y, w, barW)
		}
	}
	if bars[0].X != labelW || bars[1].X != bars[0].X+bars[0].W || bars[0].Fill != familyColor("gemm") {
		t.Errorf("segments not laid out left to right from the label column: %+v", bars[:2])
	}
	// The legend names every family once.
	var legend []string
	for _, tx := range s.Texts {
		if tx.Class == "leg" {
			legend = append(legend, tx.Text)
		}
	}
	if strings.Join(legend, ",") != "gemm,attention,other,memset" {
		t.Errorf("legend %v", legend)
	}
}

// TestReportBars: the longest bar fills the plot, the others in
// proportion; long names are shortened with the full name as tooltip.
func TestReportBars(t *testing.T) {
	long := strings.Repeat("k", 100)
	s := hBars("kernels", "x", []barItem{{Name: long, Value: 200}, {Name: "b", Value: 50}, {Name: "c", Value: 0}})
	if s.Bars != 3 {
		t.Fatalf("%d bars", s.Bars)
	}
	full := float64(chartW - nameW - 150)
	if w := float64(s.Rects[0].W); math.Abs(w-full) > 0.1 {
		t.Errorf("longest bar %v, want %v", w, full)
	}
	if w := float64(s.Rects[1].W); math.Abs(w-full/4) > 0.1 {
		t.Errorf("quarter bar %v, want %v", w, full/4)
	}
	if w := float64(s.Rects[2].W); w != 1 {
		t.Errorf("zero bar %v, want a 1-unit stub", w)
	}
	// The long name wraps onto three lines, nothing cut, the rows under
	// it moved down by the two lines it added.
	lbl := s.Texts[0]
	lines := append([]string{lbl.Text}, lbl.More...)
	if lbl.Title != long || len(lines) != 3 || strings.Join(lines, "") != long {
		t.Errorf("label %q (title %q): want the whole name on 3 lines, the full name on hover", lines, lbl.Title)
	}
	for _, l := range lines {
		if textWidth(l) > nameChars {
			t.Errorf("label line %q is wider than %d", l, nameChars)
		}
	}
	if got, want := float64(s.Rects[1].Y-s.Rects[0].Y), float64(16+6+2*lineH); got != want {
		t.Errorf("the second bar is %v under the first, want %v", got, want)
	}
}

// TestReportDivergingBars: slower to the right of zero, faster to the
// left, not significant faded.
func TestReportDivergingBars(t *testing.T) {
	s := divergingBars("delta", "x", []deltaItem{{Name: "up", Value: 100}, {Name: "down", Value: -50, Muted: true}})
	zero := s.Lines[0].X1
	up, down := s.Rects[0], s.Rects[1]
	if up.X != zero || !strings.Contains(up.Class, "up") {
		t.Errorf("slower bar %+v should start at zero %v", up, zero)
	}
	if math.Abs(float64(down.X+down.W-zero)) > 0.1 || !strings.Contains(down.Class, "down muted") {
		t.Errorf("faster bar %+v should end at zero %v, faded", down, zero)
	}
	if math.Abs(float64(down.W)*2-float64(up.W)) > 0.2 {
		t.Errorf("bars %v and %v not in proportion 1:2", down.W, up.W)
	}
}

// TestReportTimelineScene: lanes by stream (stream-less last), events
// clipped to the window, the focus instance outlined on top.
func TestReportTimelineScene(t *testing.T) {
	s := timelineScene(Timeline{FromNS: 1000, ToNS: 2000, FocusID: 1, Events: []TimelineEvent{
		{KernelID: 1, Name: "focus", Category: "communication", Stream: 22, HasStream: true, TSNS: 1400, DurNS: 100},
		{KernelID: 2, Name: "before", Category: "compute", Stream: 7, HasStream: true, TSNS: 500, DurNS: 1000},
		{KernelID: 3, Name: "nostream", Category: "memory", TSNS: 1900, DurNS: 500},
	}})
	if s.Bars != 3 {
		t.Fatalf("%d bars", s.Bars)
	}
	var lanes []string
	for _, tx := range s.Texts {
		if strings.HasPrefix(tx.Text, "stream") {
			lanes = append(lanes, tx.Text)
		}
	}
	if strings.Join(lanes, ",") != "stream 7,stream 22,stream ?" {
		t.Errorf("lanes %v", lanes)
	}
	var evs []svgRect
	for _, r := range s.Rects {
		if strings.HasPrefix(r.Class, "bar") {
			evs = append(evs, r)
		}
	}
	plotW := float64(chartW - 90 - 16)
	if before := evs[0]; before.X != 90 || math.Abs(float64(before.W)-plotW/2) > 0.1 {
		t.Errorf("event starting before the window: %+v, want clipped to its start, half the plot wide", before)
	}
	// The focus instance is the last event of its lane, so that nothing
	// of its lane covers its outline.
	focus := -1
	for i, r := range evs {
		if strings.Contains(r.Class, "focus") {
			focus = i
		}
	}
	if focus < 0 || !strings.Contains(evs[focus].Title, "longest instance") {
		t.Fatalf("no marked focus instance in %+v", evs)
	}
	for _, r := range evs[focus+1:] {
		if r.Y == evs[focus].Y {
			t.Errorf("%+v drawn over the focus instance", r)
		}
	}
}

// testHistory is the history of one stage over runs whose every step
// (six per run) takes medUS[i] µs, +-1 µs alternately; built by
// analysis.NewHistory with the default rule.
func testHistory(labels []string, medUS []int64, stage string) *analysis.HistoryReport {
	var runs []analysis.HistoryRunInfo
	var rows []queries.HistoryStepsRow
	for i, l := range labels {
		id := int64(i + 1)
		runs = append(runs, analysis.HistoryRunInfo{RunID: id, Label: l, IngestedAt: time.Date(2026, 1, 2, 3, 4, i, 0, time.UTC)})
		for step := range int64(6) {
			v := medUS[i]*1000 + (step%3-1)*1000 // -1, 0, +1 µs: the median is medUS
			rows = append(rows, queries.HistoryStepsRow{RunID: id, Stage: stage, TraceID: id, Step: step, ValueNS: v,
				Launches: 1, Steps: 6, LaunchesPerStep: 1})
		}
	}
	return analysis.NewHistory(runs, rows, analysis.HistoryOptions{Series: analysis.SeriesMetric, Match: "step_time", Rule: stats.DefaultChangeRule})
}

// TestReportHistory: a Document's histories are drawn in HTML (a point per
// run, the change point ringed and marked slower) and tabled in markdown
// as `tracehouse history` prints them, under a contents entry.
func TestReportHistory(t *testing.T) {
	d := NewDocument("h", nil)
	// 100, 102, 98, 101 µs, then 130: 30% above the median of the previous
	// four (100.5 µs), far beyond the 5% floor and their spread.
	h := testHistory([]string{"r1", "r2", "r3", "r4", "r5"}, []int64{100, 102, 98, 101, 130}, "decode")
	d.History = []*analysis.HistoryReport{h}
	if len(h.Stages) != 1 || !slices.Equal(h.Stages[0].ChangePoints, []string{"r5"}) {
		t.Fatalf("history stages %+v, want decode with r5 a change point", h.Stages)
	}
	c := HistoryChart(h, &h.Stages[0])
	var vals []float64
	for _, p := range c.Points {
		vals = append(vals, p.Value)
	}
	if !slices.Equal(vals, []float64{100, 102, 98, 101, 130}) || c.Points[4].Change != analysis.ChangeSlower || c.Points[3].Change != "" {
		t.Errorf("chart points %+v", c.Points)
	}
	if lo, hi := c.Points[0].Lo, c.Points[0].Hi; lo == nil || hi == nil || *lo > 99 || *hi < 101 {
		t.Errorf("r1 interval %v..%v, want around 99..101", lo, hi)
	}
	s := lineScene(c)
	var rings, points, marks int
	for _, c := range s.Circles {
		switch c.Class {
		case "ring slower":
			rings++
		case "pt", "pt change slower":
			points++
		}
	}
	for _, x := range s.Texts {
		if x.Class == "mark slower" && x.Text == "▲" {
			marks++
		}
	}
	if points != 5 || rings != 1 || marks != 1 || s.Bars != 5 {
		t.Errorf("%d points, %d rings, %d arrows, %d bars: want 5, 1, 1, 5", points, rings, marks, s.Bars)
	}
	if len(s.Polys) != 1 || strings.Count(s.Polys[0].Points, ",") != 5 {
		t.Errorf("series polyline %+v", s.Polys)
	}
	var hb, m bytes.Buffer
	if err := RenderHTML(&hb, d, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := hb.String()
	for _, want := range []string{`<svg class="chart history"`, `<a href="#history-1"`, `<a href="#history-1-decode"`,
		`<h2>History: step time per step</h2>`, `class="ring slower"`, `<td data-sort="r5">r5<div class="more"><span class="k">Ingested:</span>`, "▲ slower"} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if err := Render(&m, Markdown, d.Markdown()); err != nil {
		t.Fatal(err)
	}
	md := m.String()
	// The row of `tracehouse history`: order, run, ingested, steps, median,
	// interval, launches, share, departure from the previous runs' median
	// (130 / 100.5 - 1 = +29.4%), the mark.
	if !strings.Contains(md, "| 5 | r5 | 2026-01-02 03:04:04 | 6 | 130.0 |") || !strings.Contains(md, "| +29.4% | ▲ slower |") ||
		!strings.Contains(md, "- [History: step time per step](#history-step-time-per-step)") ||
		!strings.Contains(md, "\n## History: step time per step\n") || !strings.Contains(md, "\n### decode: 5 run(s)\n") {
		t.Errorf("markdown history:\n%s", md)
	}
	if n := CheckMarkdownTables(t, m.Bytes()); n != 1 {
		t.Errorf("%d markdown tables, want the history's", n)
	}
}

// TestReportGrouping: models alphabetical with unknown last, frameworks in
// vocab order, runs by label.
func TestReportGrouping(t *testing.T) {
	mk := func(label, model, fw string) *TriageReport {
		return &TriageReport{Run: label, Model: model, frameworkID: fw, Framework: fw}
	}
	d := NewDocument("g", []*TriageReport{mk("z", "unknown", "vllm"), mk("b", "m2", "tokenspeed"), mk("a", "m2", "sglang"),
		mk("c", "m1", "vllm"), mk("d", "m2", "sglang"), mk("e", "m2", "trtllm")})
	var got []string
	for _, m := range d.Models {
		for _, f := range m.Frameworks {
			for _, r := range f.Runs {
				got = append(got, m.Model+"/"+f.Framework+"/"+r.Run)
			}
		}
	}
	want := "m1/vllm/c m2/sglang/a m2/sglang/d m2/trtllm/e m2/tokenspeed/b unknown/vllm/z"
	if strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
	if d.Runs() != 6 {
		t.Errorf("Runs() = %d", d.Runs())
	}
}

func TestReportTimeKey(t *testing.T) {
	for v, want := range map[string]string{"794 µs": "794000", "7.22 ms": "7.22e+06", "1.5 s": "1.5e+09", "12 ns": "12",
		"0.10 / 0.20 / 0.30 ms": "100000", "22.6%": "", "8": "", "p=0.010": "", "637.0 -> 806.2": "", "3 steps": ""} {
		if got := timeKey(v); got != want {
			t.Errorf("timeKey(%q) = %q, want %q", v, got, want)
		}
	}
}

// TestReportRoundTicks: an axis ticks at 1, 2 or 5 times a power of ten,
// from at most its lowest value to at least its highest, one step past
// neither end; labels carry the decimals the step needs.
func TestReportRoundTicks(t *testing.T) {
	cases := []struct {
		lo, hi float64
		want   []float64
		dec    int
	}{
		// the history axis issue 34 saw: 8776.0 / 12505.2 / 16234.4
		{8776.0, 16234.4, []float64{8000, 10000, 12000, 14000, 16000, 18000}, 0},
		{0, 1, []float64{0, 0.5, 1}, 1},
		{0.12, 0.93, []float64{0, 0.5, 1}, 1},
		{0.12, 0.61, []float64{0, 0.2, 0.4, 0.6, 0.8}, 1},
		{95, 131, []float64{90, 100, 110, 120, 130, 140}, 0},
		{-27.9, 21.1, []float64{-40, -20, 0, 20, 40}, 0},
	}
	for _, c := range cases {
		got, dec := roundTicks(c.lo, c.hi, 4)
		if !slices.Equal(got, c.want) || dec != c.dec {
			t.Errorf("roundTicks(%v, %v) = %v (%d decimals), want %v (%d)", c.lo, c.hi, got, dec, c.want, c.dec)
		}
	}
	// Properties over many ranges: 1-2-5 steps, covering, no spare step.
	for lo := -3.7; lo < 50; lo += 1.3 {
		for span := 0.01; span < 1e6; span *= 3.1 {
			hi := lo + span
			ticks, _ := roundTicks(lo, hi, 4)
			step := ticks[1] - ticks[0]
			m := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9))
			if math.Abs(m-1) > 1e-6 && math.Abs(m-2) > 1e-6 && math.Abs(m-5) > 1e-6 {
				t.Errorf("[%v, %v]: step %v is not 1, 2 or 5 times a power of ten", lo, hi, step)
			}
			first, last := ticks[0], ticks[len(ticks)-1]
			if first > lo+1e-9*step || last < hi-1e-9*step || first+step <= lo-1e-9*step || last-step >= hi+1e-9*step {
				t.Errorf("[%v, %v]: ticks %v do not just cover it", lo, hi, ticks)
			}
			if len(ticks) < 3 || len(ticks) > 10 {
				t.Errorf("[%v, %v]: %d ticks", lo, hi, len(ticks))
			}
		}
	}
}

// TestReportChartLabelsDistinct: two kernels whose names differ only far
// into their template arguments (DeepGEMM's shapes) get different labels
// in one chart, wrapped into lines within nameChars rather than cut, the
// full name on hover.
func TestReportChartLabelsDistinct(t *testing.T) {
	a := "void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)0, 0u, 0u, 7168u, 128u, 128u, 128u, 1u, 128u, 2u, false, cutlass::bfloat16_t, 36864u>"
	b := "void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)0, 0u, 0u, 7168u, 128u, 128u, 128u, 1u, 128u, 2u, false, cutlass::bfloat16_t, 24576u>"
	for _, s := range []*scene{
		hBars("kernels", "x", []barItem{{Name: a, Value: 2}, {Name: b, Value: 1}}),
		divergingBars("delta", "x", []deltaItem{{Name: a, Value: 2}, {Name: b, Value: -1}}),
	} {
		var labels []string
		for _, x := range s.Texts {
			if x.Class == "lbl" {
				lines := append([]string{x.Text}, x.More...)
				labels = append(labels, strings.Join(lines, " "))
				for _, l := range lines {
					if textWidth(l) > nameChars || strings.Contains(l, "…") {
						t.Errorf("label line %q: want at most %d columns, nothing cut", l, nameChars)
					}
				}
				if x.Title != a && x.Title != b {
					t.Errorf("label %q (title %q): want the full name on hover", lines, x.Title)
				}
			}
		}
		if len(labels) != 2 || labels[0] == labels[1] {
			t.Errorf("%s labels %q: want two different ones", s.Kind, labels)
		}
	}
}

// TestHistoryRunLabelsWrap: a run label wider than the room between two
// points wraps after a '-' (never inside a word), the chart growing by a
// line; where even a part between two dashes does not fit, every second
// point is labelled; no label is cut. Six points leave room for
// "tokenspeed-deepseek" whole.
func TestHistoryRunLabelsWrap(t *testing.T) {
	labels := func(runs []string) (map[string][]string, *scene) {
		vals := make([]int64, len(runs))
		for i := range vals {
			vals[i] = 100
		}
		h := testHistory(runs, vals, "decode")
		s := lineScene(HistoryChart(h, &h.Stages[0]))
		got := map[string][]string{}
		for _, x := range s.Texts {
			if x.Class == "tick" && x.Y == 26+180+16 {
				got[strings.Join(append([]string{x.Text}, x.More...), "")] = append([]string{x.Text}, x.More...)
			}
		}
		return got, s
	}
	var runs []string
	for i := range 12 {
		runs = append(runs, fmt.Sprintf("tokenspeed-deepseek-%02d", i))
	}
	// 12 points 70 units apart: 9 characters a line at 6.5 a character,
	// less than "tokenspeed-"; two points apart, 20.
	got, s := labels(runs)
	want := map[string][]string{}
	for i := 0; i < 12; i += 2 {
		want[runs[i]] = []string{"tokenspeed-deepseek-", fmt.Sprintf("%02d", i)}
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("labels %q, want %q", got, want)
	}
	if s.H != px(26+180+40+lineH) {
		t.Errorf("height %v, want room for two label lines", s.H)
	}
	got, s = labels([]string{"short", "tokenspeed-deepseek", "sglang-llama", "a", "b", "c"})
	if len(got) != 6 || len(got["tokenspeed-deepseek"]) != 1 || s.H != 26+180+40 {
		t.Errorf("six points: labels %q, height %v", got, s.H)
	}
}
