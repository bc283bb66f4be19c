package report

import (
	"bytes"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/queries"
)

// TestTriageSpread: the spread rows land on their kernels as given; full
// output (--wide, markdown) shows them, fitted text does not; CSV and JSON
// carry them in ns.
func TestTriageSpread(t *testing.T) {
	t.Parallel()
	d := triageData(valid(0), false)
	d.Spread = []queries.KernelSpreadRow{
		{Stage: "decode", ShortName: "gemm<1>", Events: 2, MinNS: 2000, P50NS: 3000, P90NS: 3800, MaxNS: 4000,
			StddevNS: sql.NullFloat64{Float64: 1414.2135623730951, Valid: true}},
		{Stage: "decode", ShortName: "norm", Events: 1, MinNS: 3000, P50NS: 3000, P90NS: 3000, MaxNS: 3000},
	}
	r := NewTriage(d, TriageOptions{})
	k := r.Stages[1].Kernels[0]
	if k.Kernel != "gemm<1>" || k.Spread == nil || k.Spread.MinNS != 2000 || k.Spread.P90NS != 3800 || *k.Spread.StddevNS != 1414.2135623730951 {
		t.Fatalf("gemm spread %+v", k.Spread)
	}
	if n := r.Stages[1].Kernels[1]; n.Spread == nil || n.Spread.StddevNS != nil {
		t.Errorf("norm spread %+v", n.Spread)
	}
	if r.Stages[0].Kernels[0].Spread != nil {
		t.Errorf("prefill has no spread rows")
	}
	render := func(f Format, width int) string {
		doc := r.Doc(f)
		doc.Width = width
		var b bytes.Buffer
		if err := Render(&b, f, doc); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if fitted := render(Text, 400); strings.Contains(fitted, "Stddev") {
		t.Errorf("fitted text shows the spread:\n%s", fitted)
	}
	for _, out := range []string{render(Text, 0), render(Markdown, 0)} {
		for _, want := range []string{"Median", "Stddev", "2.00 µs", "3.80 µs", "4.00 µs", "1.41 µs"} {
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
	at := slices.Index(kt.Columns, Column{Name: "min_ns"})
	if at < 0 || !slices.Equal(kt.Rows[0][at:at+5], []string{"2000", "3000", "3800", "4000", "1414.213562373095"}) ||
		!slices.Equal(kt.Rows[1][at:at+5], []string{"3000", "3000", "3000", "3000", ""}) {
		t.Errorf("csv kernels %+v", kt)
	}
	names := jsonKeyPaths(t, r, "stages[].kernels[].spread.")
	want := []string{"stages[].kernels[].spread.max_ns", "stages[].kernels[].spread.median_ns", "stages[].kernels[].spread.min_ns",
		"stages[].kernels[].spread.p90_ns", "stages[].kernels[].spread.stddev_ns"}
	if !slices.Equal(names, want) {
		t.Errorf("spread JSON fields: %v, want %v", names, want)
	}
}
