package analysis

import (
	"database/sql"
	"math"
	"testing"

	"github.com/tracehouse/tracehouse/queries"
)

// TestDecompositionIdleCauses: a step's idle time is split by cause when
// its causes add up (IdleCauses.Valid) and counts whole as "idle" when they
// do not; each part is its mean per step, computed here from the rows, and
// the parts add up to the step-time delta.
func TestDecompositionIdleCauses(t *testing.T) {
	t.Parallel()
	idle := func(int, int) int64 { return 30_000 }
	base := fakeSide("base", 1, 8, twoKernels(3, 1), idle)
	cand := fakeSide("cand", 1, 8, twoKernels(3, 1), func(_, step int) int64 { return 30_000 + int64(step)*1000 })
	// Base: 30 µs of each step split 20 host-bound, 6 launch latency, 4
	// graph-internal. Candidate: the extra idle is host-bound, except in
	// step 8, whose causes do not add up (several devices).
	for i := range base.Steps {
		base.Steps[i].IdleCauses = queries.IdleCauses{HostBoundNS: 20_000, LaunchLatencyNS: 6_000, GraphInternalNS: 4_000, Valid: true}
	}
	for i := range cand.Steps {
		s := &cand.Steps[i]
		if s.Step == 8 {
			continue
		}
		s.IdleCauses = queries.IdleCauses{HostBoundNS: s.IdleNS - 10_000, LaunchLatencyNS: 6_000, GraphInternalNS: 4_000, Valid: true}
	}
	st := NewCompare(base, cand, gates).Stages[0]
	type want struct{ base, cand float64 }
	var cHost, cStep, bStep float64
	for _, s := range cand.Steps {
		if s.Step != 8 {
			cHost += float64(s.IdleNS - 10_000)
		}
		cStep += float64(s.WindowNS)
	}
	for _, s := range base.Steps {
		bStep += float64(s.WindowNS)
	}
	n := float64(len(cand.Steps))
	wants := map[string]want{
		"idle:host_bound":     {20_000, cHost / n},
		"idle:launch_latency": {6_000, 6_000 * 7 / n},
		"idle:graph_internal": {4_000, 4_000 * 7 / n},
		"idle":                {0, float64(cand.Steps[7].IdleNS) / n},
	}
	var sum int64
	seen := map[string]bool{}
	for _, p := range st.Decomposition {
		sum += p.DeltaNS
		seen[p.Part] = true
		if w, ok := wants[p.Part]; ok {
			if p.BaseNS != int64(math.Round(w.base)) || p.CandNS != int64(math.Round(w.cand)) || math.Abs(float64(p.DeltaNS)-(w.cand-w.base)) > 1 {
				t.Errorf("%s: %+v, want base %v candidate %v", p.Part, p, w.base, w.cand)
			}
		}
		if p.Part == "idle:sync" || p.Part == "idle:other" {
			t.Errorf("a cause that never occurs is a row: %+v", p)
		}
	}
	for part := range wants {
		if !seen[part] {
			t.Errorf("no %s row in %+v", part, st.Decomposition)
		}
	}
	if want := int64(math.Round(cStep/n - bStep/n)); sum != want || st.StepDeltaNS != want {
		t.Errorf("parts add up to %d, step delta %d, want %d", sum, st.StepDeltaNS, want)
	}
}

// TestCompareCommOverlap: each side's rows of the stage pair up by rank;
// the delta is in points where both sides communicate; a rank that
// communicates on neither side is no row; another stage's rows stay out.
func TestCompareCommOverlap(t *testing.T) {
	t.Parallel()
	idle := func(int, int) int64 { return 30_000 }
	base := fakeSide("base", 2, 6, twoKernels(3, 1), idle)
	cand := fakeSide("cand", 2, 6, twoKernels(3, 1), idle)
	pct := func(v float64) sql.NullFloat64 { return sql.NullFloat64{Float64: v, Valid: true} }
	base.CommOverlap = []queries.CommOverlapRow{
		{Stage: "decode", Rank: 0, CommNS: 1000, OverlapNS: 250, OverlapPct: pct(25)},
		{Stage: "decode", Rank: 1, CommNS: 800, OverlapNS: 400, OverlapPct: pct(50)},
		{Stage: "decode", Rank: 2, CompNS: 10},
		{Stage: "prefill", Rank: 0, CommNS: 5, OverlapPct: pct(0)},
	}
	cand.CommOverlap = []queries.CommOverlapRow{
		{Stage: "decode", Rank: 0, CommNS: 1000, OverlapNS: 600, OverlapPct: pct(60)},
		{Stage: "decode", Rank: 2, CompNS: 10},
	}
	st := NewCompare(base, cand, gates).Stages[0]
	c := st.CommOverlap
	if len(c) != 2 || c[0].Rank != 0 || *c[0].BasePct != 25 || *c[0].CandPct != 60 || *c[0].DeltaPoints != 35 ||
		c[0].BaseCommNS != 1000 || c[1].Rank != 1 || *c[1].BasePct != 50 || c[1].CandPct != nil || c[1].DeltaPoints != nil {
		t.Errorf("comm overlap %+v", c)
	}
}
