package queries

import (
	"cmp"
	"context"
	"database/sql"
	"math"
	"slices"
	"testing"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestCommOverlap: rank 0's decode on device 0 (ns):
//
//	comm  C1 [0,100) C2 [180,300)          union 220
//	comp  G1 [50,150) G2 [120,200)         union [50,200) = 150
//	memory M1 [250,400): neither
//	both: [50,100) + [180,200) = 70, 70/220 of communication time
//
// rank 1: comm [0,10) alone (0%); rank 0's prefill: no communication.
func TestCommOverlap(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(1, "r1")
	f.trace(1, 1, 0, "decode", "formal")
	f.trace(2, 1, 1, "decode", "formal")
	f.trace(3, 1, 0, "prefill", "formal")
	f.name(1, "ncclKernel_AllReduce", "ncclKernel_AllReduce", "", "communication", "communication")
	f.name(2, "gemm_kernel<1>", "gemm", "", "gemm", "compute")
	f.name(3, "Memcpy DtoD", "Memcpy DtoD", "", "memcpy", "memory")
	f.name(4, "norm_kernel", "norm", "", "norm", "elementwise")
	f.kernels(
		kernel{ID: 1, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 0, Dur: 100, Device: ptr(0), Stream: ptr(8)},
		kernel{ID: 2, Trace: 1, Run: 1, Stage: "decode", Name: 2, TS: 50, Dur: 100, Device: ptr(0), Stream: ptr(7)},
		kernel{ID: 3, Trace: 1, Run: 1, Stage: "decode", Name: 4, TS: 120, Dur: 80, Device: ptr(0), Stream: ptr(7)},
		kernel{ID: 4, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 180, Dur: 120, Device: ptr(0), Stream: ptr(8)},
		kernel{ID: 5, Trace: 1, Run: 1, Stage: "decode", Name: 3, TS: 250, Dur: 150, Device: ptr(0), Stream: ptr(9)},
		kernel{ID: 6, Trace: 2, Run: 1, Rank: 1, Stage: "decode", Name: 1, TS: 0, Dur: 10, Device: ptr(1), Stream: ptr(8)},
		kernel{ID: 7, Trace: 3, Run: 1, Stage: "prefill", Name: 2, TS: 0, Dur: 5, Device: ptr(0), Stream: ptr(7)},
	)
	rows, err := CommOverlap(context.Background(), f.db, LaunchParams{Run: 1})
	if err != nil {
		t.Fatal(err)
	}
	pct := func(v float64) sql.NullFloat64 { return sql.NullFloat64{Float64: v, Valid: true} }
	want := []CommOverlapRow{
		{Stage: "prefill", Rank: 0, CompNS: 5},
		{Stage: "decode", Rank: 0, CommNS: 220, CompNS: 150, OverlapNS: 70, OverlapPct: pct(100 * 70.0 / 220)},
		{Stage: "decode", Rank: 1, CommNS: 10, OverlapPct: pct(0)},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", rows)
	}
	for i := range want {
		g, w := rows[i], want[i]
		if g.Stage != w.Stage || g.Rank != w.Rank || g.CommNS != w.CommNS || g.CompNS != w.CompNS || g.OverlapNS != w.OverlapNS ||
			g.OverlapPct.Valid != w.OverlapPct.Valid || math.Abs(g.OverlapPct.Float64-w.OverlapPct.Float64) > 1e-9 {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
	rows, err = CommOverlap(context.Background(), f.db, LaunchParams{Run: 1, Rank: rankOf(1)})
	if err != nil || len(rows) != 1 || rows[0].Rank != 1 {
		t.Errorf("rank 1: %+v %v", rows, err)
	}
}

type span struct{ from, to int64 }

// merged is the union of spans as sorted, disjoint spans.
func merged(ss []span) []span {
	s := slices.Clone(ss)
	slices.SortFunc(s, func(a, b span) int { return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to)) })
	var out []span
	for _, x := range s {
		if len(out) > 0 && x.from <= out[len(out)-1].to {
			out[len(out)-1].to = max(out[len(out)-1].to, x.to)
			continue
		}
		out = append(out, x)
	}
	return out
}

func spanSum(ss []span) (n int64) {
	for _, s := range ss {
		n += s.to - s.from
	}
	return n
}

// intersection of two sorted disjoint span lists, two pointers.
func intersection(a, b []span) (n int64) {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i].from, b[j].from), min(a[i].to, b[j].to)
		if hi > lo {
			n += hi - lo
		}
		if a[i].to < b[j].to {
			i++
		} else {
			j++
		}
	}
	return n
}

// TestCommOverlapMatchesBruteForce: on every run of the demo, each stage
// and rank's figures are those of merged intervals per device, computed
// here (merge each kind, intersect the two lists).
func TestCommOverlapMatchesBruteForce(t *testing.T) {
	t.Parallel()
	db := schematest.Open(t, finishedDemoTemplate(t)).DB
	type dev struct {
		run, trace, rank, device int64
		stage                    string
	}
	comm, comp := map[dev][]span{}, map[dev][]span{}
	if err := scanAll(db, `SELECT k.run_id, k.trace_id, k.rank, coalesce(k.device, -1), k.stage, n.category, k.ts_ns, k.ts_ns + k.dur_ns
			FROM kernels k JOIN kernel_names n USING (name_id) WHERE k.dur_ns > 0`, func(r *sql.Rows) error {
		var d dev
		var cat string
		var s span
		if err := r.Scan(&d.run, &d.trace, &d.rank, &d.device, &d.stage, &cat, &s.from, &s.to); err != nil {
			return err
		}
		switch cat {
		case "communication":
			comm[d] = append(comm[d], s)
		case "memory":
		default:
			comp[d] = append(comp[d], s)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	type key struct {
		run, rank int64
		stage     string
	}
	type sums struct{ comm, comp, both int64 }
	want := map[key]*sums{}
	for d := range comp {
		if _, ok := comm[d]; !ok {
			comm[d] = nil
		}
	}
	for d, cs := range comm {
		k := key{d.run, d.rank, d.stage}
		if want[k] == nil {
			want[k] = &sums{}
		}
		a, b := merged(cs), merged(comp[d])
		want[k].comm += spanSum(a)
		want[k].comp += spanSum(b)
		want[k].both += intersection(a, b)
	}
	var runs []int64
	for k := range want {
		if !slices.Contains(runs, k.run) {
			runs = append(runs, k.run)
		}
	}
	seen, overlapping := 0, 0
	for _, run := range runs {
		rows, err := CommOverlap(context.Background(), db, LaunchParams{Run: run})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			w := want[key{run, r.Rank, r.Stage}]
			if w == nil || r.CommNS != w.comm || r.CompNS != w.comp || r.OverlapNS != w.both ||
				(w.comm > 0) != r.OverlapPct.Valid || (w.comm > 0 && math.Abs(r.OverlapPct.Float64-100*float64(w.both)/float64(w.comm)) > 1e-9) {
				t.Errorf("run %d %s rank %d: %+v, want %+v", run, r.Stage, r.Rank, r, w)
			}
			seen++
			if r.OverlapNS > 0 {
				overlapping++
			}
		}
	}
	if seen != len(want) || overlapping == 0 {
		t.Errorf("%d rows for %d stage-ranks, %d with overlap", seen, len(want), overlapping)
	}
}
