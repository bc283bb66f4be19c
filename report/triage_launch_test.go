package report

import (
	"bytes"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/queries"
)

func launchTriageData() *queries.TriageData {
	d := triageData(valid(0), false)
	fl := func(v float64) sql.NullFloat64 { return sql.NullFloat64{Float64: v, Valid: true} }
	d.LaunchKernels = []queries.LaunchByKernelRow{
		{Stage: "decode", ShortName: "gemm<1>", Events: 2, Launched: 2, LaunchFigures: queries.LaunchFigures{DelayP50NS: fl(1500),
			DelayP90NS: fl(2700), DelayMaxNS: valid(3000), LaunchP50NS: fl(4500), LaunchMaxNS: valid(5000)}, LaunchBound: 1, Short: 2},
		{Stage: "decode", ShortName: "norm", Events: 1, Short: 1}, // a graph replay: no launch of its own
		{Stage: "decode", ShortName: "tiny", Events: 1, Short: 1}, // hidden by --min-share: no row to carry it
	}
	d.LaunchStages = []queries.LaunchByStageRow{{Stage: "decode", Events: 5, Launched: 2, Short: 4, ShortPct: 80, LaunchBound: 1,
		LaunchBoundPct: fl(50), LaunchFigures: queries.LaunchFigures{DelayP50NS: fl(1500), DelayP90NS: fl(2700), DelayMaxNS: valid(3000),
			LaunchP50NS: fl(4500), LaunchMaxNS: valid(5000)}, ShortNS: 10000}}
	return d
}

// TestTriageLaunch: the launch rows land on their stage and kernels as
// given; text shows the stage line always and the kernel columns only in
// full (--wide) output; markdown, CSV and JSON carry them.
func TestTriageLaunch(t *testing.T) {
	t.Parallel()
	r := NewTriage(launchTriageData(), TriageOptions{})
	if r.Stages[0].Launch != nil || r.Stages[0].Kernels[0].Launch != nil {
		t.Errorf("prefill has no launch rows")
	}
	st := r.Stages[1]
	if st.Launch == nil || st.Launch.Short != 4 || *st.Launch.LaunchBoundPct != 50 || *st.Launch.DelayP90NS != 2700 || st.Launch.ShortNS != 10000 {
		t.Fatalf("decode launch %+v", st.Launch)
	}
	k := st.Kernels[0]
	if k.Kernel != "gemm<1>" || k.Launch == nil || k.Launch.Launched != 2 || *k.Launch.DelayMaxNS != 3000 || *k.Launch.LaunchP50NS != 4500 {
		t.Errorf("gemm launch %+v", k.Launch)
	}
	if n := st.Kernels[1]; n.Launch == nil || n.Launch.Launched != 0 || n.Launch.DelayP50NS != nil {
		t.Errorf("norm launch %+v", n.Launch)
	}
	line := "Launch overhead: 4 of 5 GPU events (80.0%) ran under 10.0 µs; 1 of 2 launched (50.0%) ran shorter than their launch call" +
		" (launch-bound); launch-to-start delay median 1.50 µs, p90 2.70 µs; launch call median 4.50 µs"
	render := func(f Format, width int) string {
		d := r.Doc(f)
		d.Width = width
		var b bytes.Buffer
		if err := Render(&b, f, d); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	fitted, wide, md := render(Text, 400), render(Text, 0), render(Markdown, 0)
	if !strings.Contains(fitted, line) || !strings.Contains(wide, line) || !strings.Contains(md, line) {
		t.Errorf("no stage line %q:\n%s", line, fitted)
	}
	if strings.Contains(fitted, "Delay p50") {
		t.Errorf("fitted text shows the wide columns:\n%s", fitted)
	}
	for _, out := range []string{wide, md} {
		for _, want := range []string{"Delay p50", "Launch call p50", "1.50 µs", "2.70 µs", "3.00 µs", "4.50 µs", "1/2"} {
			if !strings.Contains(out, want) {
				t.Errorf("full output lacks %q:\n%s", want, out)
			}
		}
	}
	csv := map[string]*Table{}
	for _, tb := range r.CSVTables() {
		csv[tb.Name] = tb
	}
	kt := csv["r1.decode.kernels"]
	if kt == nil || !slices.Equal(kt.Rows[0][len(kt.Rows[0])-8:], []string{"2", "1", "2", "1500", "2700", "3000", "4500", "5000"}) ||
		!slices.Equal(kt.Rows[1][len(kt.Rows[1])-8:], []string{"0", "0", "1", "", "", "", "", ""}) {
		t.Errorf("csv kernels %+v", kt)
	}
	names := jsonKeyPaths(t, r, "stages[].launch", "stages[].kernels[].launch.")
	want := []string{"stages[].kernels[].launch.delay_max_ns", "stages[].kernels[].launch.delay_p50_ns",
		"stages[].kernels[].launch.delay_p90_ns", "stages[].kernels[].launch.launch_bound", "stages[].kernels[].launch.launch_call_max_ns",
		"stages[].kernels[].launch.launch_call_p50_ns", "stages[].kernels[].launch.launched", "stages[].kernels[].launch.short",
		"stages[].launch", "stages[].launch.delay_max_ns", "stages[].launch.delay_p50_ns", "stages[].launch.delay_p90_ns",
		"stages[].launch.events", "stages[].launch.launch_bound", "stages[].launch.launch_bound_pct", "stages[].launch.launch_call_max_ns",
		"stages[].launch.launch_call_p50_ns", "stages[].launch.launched", "stages[].launch.short", "stages[].launch.short_ns",
		"stages[].launch.short_pct"}
	if !slices.Equal(names, want) {
		t.Errorf("launch JSON fields:\n got %v\nwant %v", names, want)
	}
}
