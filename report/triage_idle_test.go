package report

import (
	"bytes"
	"database/sql"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/queries"
)

// idleRows are idle_by_stage.sql rows of a hand-made decode stage: two
// steps of 6 µs on the device (busy 4.5, host-bound 1, launch latency 0.5
// per step), stream 7 with its own 5.5 µs window per step.
func idleRows() []queries.IdleByStageRow {
	var rows []queries.IdleByStageRow
	add := func(scope string, stream sql.NullInt64, window, gaps int64, ns map[string]int64) {
		for _, p := range IdleParts {
			r := queries.IdleByStageRow{Stage: "decode", Scope: scope, Stream: stream, Steps: 2, WindowNS: window,
				WindowPerStepNS: float64(window) / 2, Gaps: gaps, Part: p, NS: ns[p], PerStepNS: float64(ns[p]) / 2,
				SharePct: sql.NullFloat64{Float64: 100 * float64(ns[p]) / float64(window), Valid: true}, LaunchGapNS: 30000}
			rows = append(rows, r)
		}
	}
	add("device", sql.NullInt64{}, 12000, 5, map[string]int64{"busy": 9000, "host_bound": 2000, "launch_latency": 1000})
	add("stream", valid(7), 11000, 4, map[string]int64{"busy": 8000, "host_bound": 2000, "other": 1000})
	return rows
}

func idleTriageData() *queries.TriageData {
	d := triageData(valid(0), false)
	d.Idle = idleRows()
	d.IdleGaps = []queries.IdleWorstGapsRow{
		{Stage: "decode", Rank: 0, Step: 2, GapNS: 1500, GapStartNS: 100, Cause: "host_bound", Before: "gemm<1>", After: "norm",
			Site: vstr("sched.py:12 launch"), KernelID: 9},
		{Stage: "decode", Rank: 0, Step: 1, GapNS: 700, GapStartNS: 40, Cause: "launch_latency", Before: "norm", After: "gemm<1>", KernelID: 4},
	}
	return d
}

// TestTriageIdleSection: the idle rows land in their stage's section as
// given (device, streams, gaps in order; none for a stage without rows),
// and the text, CSV and JSON show them.
func TestTriageIdleSection(t *testing.T) {
	t.Parallel()
	r := NewTriage(idleTriageData(), TriageOptions{})
	if r.Stages[0].Idle != nil {
		t.Errorf("prefill has no idle rows: %+v", r.Stages[0].Idle)
	}
	id := r.Stages[1].Idle
	if id == nil {
		t.Fatal("decode: no idle section")
	}
	if id.LaunchGapNS != 30000 || id.Device.Stream != nil || id.Device.WindowNS != 12000 || id.Device.WindowPerStepUS != 6 ||
		id.Device.Steps != 2 || id.Device.Gaps != 5 || len(id.Streams) != 1 || *id.Streams[0].Stream != 7 {
		t.Fatalf("idle %+v", id)
	}
	var parts []string
	var sum int64
	for _, p := range id.Device.Parts {
		parts = append(parts, p.Part)
		sum += p.NS
	}
	if !slices.Equal(parts, IdleParts) || sum != id.Device.WindowNS || id.Device.Parts[1].PerStepUS != 1 || *id.Device.Parts[1].SharePct != 100*2000.0/12000 {
		t.Errorf("device parts %+v", id.Device.Parts)
	}
	if len(id.WorstGaps) != 2 || id.WorstGaps[0].GapNS != 1500 || *id.WorstGaps[0].Site != "sched.py:12 launch" || id.WorstGaps[1].Site != nil {
		t.Errorf("gaps %+v", id.WorstGaps)
	}

	var text bytes.Buffer
	if err := Render(&text, Text, r.Doc(Text)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Where the GPU waits",
		"Step time 6.00 µs per step (mean of 2 step(s), device: the union of its streams) = busy 4.50 µs 75.0% + host-bound 1.00 µs 16.7% + launch latency 500 ns 8.3%",
		"device    6.00 µs  4.50 µs 75.0%  1.00 µs 16.7%  500 ns 8.3%     -     -               -            5",
		"stream 7  5.50 µs  4.00 µs 72.7%  1.00 µs 18.2%  -               -     -               500 ns 9.1%  4",
		"1.50 µs  host-bound      2     gemm<1>  norm     sched.py:12 launch",
		"700 ns   launch-latency  1     norm     gemm<1>  -",
		"launch latency (launched earlier, gap under 30.0 µs)",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	// the section sits between the kernels and the overlap opportunities
	s := text.String()
	if k, w, o := strings.LastIndex(s, "\nKernels"), strings.Index(s, "Where the GPU waits"), strings.LastIndex(s, "Overlap opportunities"); !(k < w && w < o) {
		t.Errorf("section order: kernels %d, idle %d, overlap %d", k, w, o)
	}

	csv := map[string]*Table{}
	for _, tb := range r.CSVTables() {
		csv[tb.Name] = tb
	}
	if tb := csv["r1.decode.idle"]; tb == nil || len(tb.Rows) != 12 ||
		!slices.Equal(tb.Rows[1], []string{"device", "", "2", "12000", "5", "host_bound", "2000", "16.666666666666668", "30000"}) ||
		!slices.Equal(tb.Rows[11], []string{"stream", "7", "2", "11000", "4", "other", "1000", "9.090909090909092", "30000"}) {
		t.Errorf("idle csv %+v", tb)
	}
	if tb := csv["r1.decode.idle_gaps"]; tb == nil || len(tb.Rows) != 2 ||
		!slices.Equal(tb.Rows[0], []string{"1500", "100", "host_bound", "0", "2", "gemm<1>", "norm", "sched.py:12 launch"}) {
		t.Errorf("idle gaps csv %+v", tb)
	}
	if _, ok := csv["r1.prefill.idle"]; ok {
		t.Error("prefill has no idle table")
	}

	names := jsonKeyPaths(t, r, "stages[].idle")
	want := []string{"stages[].idle", "stages[].idle.device", "stages[].idle.device.gaps", "stages[].idle.device.parts",
		"stages[].idle.device.parts[].ns", "stages[].idle.device.parts[].part", "stages[].idle.device.parts[].per_step_us",
		"stages[].idle.device.parts[].share_pct", "stages[].idle.device.steps", "stages[].idle.device.stream",
		"stages[].idle.device.window_ns", "stages[].idle.device.window_per_step_us", "stages[].idle.launch_gap_ns",
		"stages[].idle.streams", "stages[].idle.streams[].gaps", "stages[].idle.streams[].parts",
		"stages[].idle.streams[].parts[].ns", "stages[].idle.streams[].parts[].part", "stages[].idle.streams[].parts[].per_step_us",
		"stages[].idle.streams[].parts[].share_pct", "stages[].idle.streams[].steps", "stages[].idle.streams[].stream",
		"stages[].idle.streams[].window_ns", "stages[].idle.streams[].window_per_step_us",
		"stages[].idle.worst_gaps", "stages[].idle.worst_gaps[].after", "stages[].idle.worst_gaps[].before",
		"stages[].idle.worst_gaps[].cause", "stages[].idle.worst_gaps[].gap_ns", "stages[].idle.worst_gaps[].gap_start_ns",
		"stages[].idle.worst_gaps[].rank", "stages[].idle.worst_gaps[].site",
		"stages[].idle.worst_gaps[].step"}
	if !slices.Equal(names, want) {
		t.Errorf("idle JSON fields:\n got %v\nwant %v", names, want)
	}
}

// TestTriageIdleHTML: the HTML report's stage carries the section: the
// bar of each scope with its parts' shares (widths proportional to them)
// and the text view's tables, the gaps' sites escaped.
func TestTriageIdleHTML(t *testing.T) {
	t.Parallel()
	d := idleTriageData()
	d.IdleGaps[0].Site = vstr("<b>sched.py:12</b>")
	var b bytes.Buffer
	if err := RenderHTML(&b, NewDocument("idle", []*TriageReport{NewTriage(d, TriageOptions{})}), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<h6>Where the GPU waits</h6>",
		"<title>device, host-bound: 1.00 µs per step, 16.7% of the step</title>",
		"<title>stream 7, other idle: 500 ns per step, 9.1% of the step</title>",
		"&lt;b&gt;sched.py:12&lt;/b&gt;",
		">host-bound<", ">launch-latency<",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<b>sched") {
		t.Error("a site is unescaped")
	}
	// The device bar's segments: busy 9000, host-bound 2000, launch
	// latency 1000 of 12000, widths in that proportion.
	chart := regexp.MustCompile(`(?s)<svg class="chart idle".*?</svg>`).FindString(page)
	seg := regexp.MustCompile(`<rect x="[^"]*" y="6" width="([0-9.]+)"[^>]*class="bar seg"`)
	var widths []float64
	for _, m := range seg.FindAllStringSubmatch(chart, -1) {
		w, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		widths = append(widths, w)
	}
	if len(widths) != 3 || math.Abs(widths[0]/widths[1]-4.5) > 0.01 || math.Abs(widths[1]/widths[2]-2) > 0.01 {
		t.Errorf("device bar widths %v, want in proportion 9:2:1", widths)
	}
}

// TestIdleStepBars: the per-step rows become one bar per step in their
// stage, segments in the rows' order with each part's share, the caption
// says how many of the stage's steps are drawn, and JSON leaves them out.
func TestIdleStepBars(t *testing.T) {
	t.Parallel()
	d := idleTriageData()
	for step, parts := range []map[string]int64{{"busy": 4000, "host_bound": 2000}, {"busy": 5000, "launch_latency": 1000}} {
		for _, p := range IdleParts {
			d.IdleSteps = append(d.IdleSteps, queries.IdleByStepRow{Stage: "decode", Rank: 0, Step: int64(step + 1), StageSteps: 5,
				WindowNS: 6000, Part: p, NS: parts[p], SharePct: sql.NullFloat64{Float64: 100 * float64(parts[p]) / 6000, Valid: true}})
		}
	}
	r := NewTriage(d, TriageOptions{})
	st := &r.Stages[1]
	if len(st.Idle.Steps) != 2 || st.Idle.Steps[1].Step != 2 || len(st.Idle.Steps[1].Parts) != len(IdleParts) || st.Idle.StageSteps != 5 {
		t.Fatalf("steps %+v", st.Idle.Steps)
	}
	sc := idleStepBars(st, false)
	if sc == nil || sc.Bars != 4 {
		t.Fatalf("bars %+v", sc)
	}
	var labels, titles []string
	for _, tx := range sc.Texts {
		if tx.Class == "lbl" {
			labels = append(labels, tx.Text)
		}
	}
	for _, rc := range sc.Rects {
		if rc.Title != "" {
			titles = append(titles, rc.Title)
		}
	}
	if !slices.Equal(labels, []string{"step 1", "step 2"}) {
		t.Errorf("labels %v", labels)
	}
	if want := "step 2 of 6.00 µs, launch latency: 1.00 µs, 16.7% of the step"; !slices.Contains(titles, want) {
		t.Errorf("titles %v lack %q", titles, want)
	}
	if c := idleStepCaption(st, false); !strings.Contains(c, "the first 2 of 5 steps") {
		t.Errorf("caption %q", c)
	}
	if names := jsonKeyPaths(t, r, "stages[].idle.steps", "stages[].idle.stage_steps"); len(names) != 0 {
		t.Errorf("JSON has %v", names)
	}
	if idleStepBars(&r.Stages[0], false) != nil {
		t.Error("prefill has no step rows: no chart")
	}
}
