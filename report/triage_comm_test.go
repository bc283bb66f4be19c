package report

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/queries"
)

// TestTriageCommOverlap: each rank's row lands on its stage as given, the
// header says it per rank (nothing for a stage without communication), and
// JSON carries the figures in ns.
func TestTriageCommOverlap(t *testing.T) {
	t.Parallel()
	d := triageData(sql.NullInt64{}, false)
	d.CommOverlap = []queries.CommOverlapRow{
		{Stage: "prefill", Rank: 0, CompNS: 1000},
		{Stage: "decode", Rank: 0, CommNS: 4000, CompNS: 9000, OverlapNS: 1000, OverlapPct: sql.NullFloat64{Float64: 25, Valid: true}},
		{Stage: "decode", Rank: 1, CommNS: 2000, CompNS: 8000, OverlapNS: 2000, OverlapPct: sql.NullFloat64{Float64: 100, Valid: true}},
	}
	r := NewTriage(d, TriageOptions{})
	if c := r.Stages[1].CommOverlap; len(c) != 2 || c[1].Rank != 1 || c[1].OverlapNS != 2000 || *c[0].OverlapPct != 25 {
		t.Fatalf("decode %+v", c)
	}
	var b bytes.Buffer
	if err := Render(&b, Text, r.Doc(Text)); err != nil {
		t.Fatal(err)
	}
	line := "Stage decode: communication hidden under computation (HTA's comm-comp overlap): rank 0 25.0% of 4.00 µs, rank 1 100.0% of 2.00 µs of communication time"
	if !strings.Contains(b.String(), line) {
		t.Errorf("text lacks %q:\n%s", line, b.String())
	}
	if strings.Contains(b.String(), "Stage extend/prefill: communication hidden") {
		t.Error("a stage without communication has a line")
	}
	js, err := json.Marshal(r.Stages[1].CommOverlap)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"rank":0,"comm_ns":4000,"comp_ns":9000,"overlap_ns":1000,"overlap_pct":25},{"rank":1,"comm_ns":2000,"comp_ns":8000,"overlap_ns":2000,"overlap_pct":100}]`; string(js) != want {
		t.Errorf("json %s", js)
	}
}
