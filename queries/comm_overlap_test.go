package queries

import (
	"cmp"
	"context"
	"database/sql"
	"math"
	"slices"
	"testing"

	"github.com/tracehouse/tracehouse/aggregates"
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
	all := rows
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
	testCommOverlapSaved(t, f.db, all)
}

// testCommOverlapSaved: TestCommOverlap's run saved as ingest saves it
// (with the step aggregates): the saved rows per device hold the known
// nanoseconds, and CommOverlap reads them while they are current
// (checked, or said fresh) and computes when told they are not, or once
// a kernel changed.
func testCommOverlapSaved(t *testing.T, db *sql.DB, want []CommOverlapRow) {
	t.Helper()
	ctx := context.Background()
	if err := aggregates.SaveOverlap(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	if err := aggregates.SaveSteps(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	got := schematest.Dump(t, db, `SELECT run_id, trace_id, rank, stage, device, comm_ns, comp_ns, overlap_ns
		FROM comm_overlap_store ORDER BY ALL`)
	const saved = "1 1 0 decode 0 220 150 70\n1 2 1 decode 1 10 0 0\n1 3 0 prefill 0 0 5 0\n"
	if got != saved {
		t.Errorf("saved rows:\n%s\nwant\n%s", got, saved)
	}
	var differ int
	if err := db.QueryRow(`SELECT count(*) FROM (
			(SELECT * FROM comm_overlap_store EXCEPT ALL SELECT * FROM _comm_parts_for(1))
			UNION ALL (SELECT * FROM _comm_parts_for(1) EXCEPT ALL SELECT * FROM comm_overlap_store))`).Scan(&differ); err != nil || differ != 0 {
		t.Errorf("saved and computed rows differ by %d (%v)", differ, err)
	}
	read := func(fresh sql.NullBool) []CommOverlapRow {
		t.Helper()
		rows, err := CommOverlap(ctx, db, LaunchParams{Run: 1, Fresh: fresh})
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	checked, isFresh, notFresh := sql.NullBool{}, sql.NullBool{Bool: true, Valid: true}, sql.NullBool{Valid: true}
	for _, fresh := range []sql.NullBool{checked, isFresh, notFresh} {
		if got := read(fresh); !slices.Equal(got, want) {
			t.Errorf("fresh %+v: %+v, want %+v", fresh, got, want)
		}
	}
	// The copy is what is read: a changed saved row shows while current.
	if _, err := db.Exec(`UPDATE comm_overlap_store SET overlap_ns = overlap_ns + 1 WHERE rank = 1`); err != nil {
		t.Fatal(err)
	}
	for fresh, wantNS := range map[sql.NullBool]int64{checked: 1, isFresh: 1, notFresh: 0} {
		if got := read(fresh); got[2].OverlapNS != wantNS {
			t.Errorf("fresh %+v: rank 1 overlap %d ns, want %d", fresh, got[2].OverlapNS, wantNS)
		}
	}
	// A kernel moved: the copy is stale, the figures computed.
	if _, err := db.Exec(`UPDATE kernels SET ts_ns = ts_ns + 1 WHERE kernel_id = 6`); err != nil {
		t.Fatal(err)
	}
	if got := read(checked); !slices.Equal(got, want) {
		t.Errorf("after a kernel moved: %+v, want %+v", got, want)
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
	// The rows read above are the saved copy (FinishPerRun saved it for
	// every run), which is what the definition computes.
	var saved, differ int
	if err := db.QueryRow(`SELECT count(*) FROM comm_overlap_store`).Scan(&saved); err != nil || saved == 0 {
		t.Errorf("%d saved rows (%v)", saved, err)
	}
	fresh, err := StepsFresh(context.Background(), db, runs)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range runs {
		if !fresh[run] {
			t.Errorf("run %d: the saved copy is not current", run)
		}
	}
	all := `(SELECT list(run_id) FROM runs)`
	if err := db.QueryRow(`SELECT count(*) FROM (
			(SELECT * FROM comm_overlap_store EXCEPT ALL SELECT * FROM _comm_parts_for(NULL, runs := ` + all + `))
			UNION ALL (SELECT * FROM _comm_parts_for(NULL, runs := ` + all + `) EXCEPT ALL SELECT * FROM comm_overlap_store))`).Scan(&differ); err != nil || differ != 0 {
		t.Errorf("saved and computed rows differ by %d (%v)", differ, err)
	}
	// The public macro (by label, one rank) reads the same rows.
	for _, run := range runs {
		var label string
		if err := db.QueryRow(`SELECT label FROM runs WHERE run_id = ?`, run).Scan(&label); err != nil {
			t.Fatal(err)
		}
		rows, err := CommOverlap(context.Background(), db, LaunchParams{Run: run, Rank: rankOf(0)})
		if err != nil {
			t.Fatal(err)
		}
		var got []CommOverlapRow
		if err := scanAll(db, `SELECT stage, rank, comm_ns, comp_ns, overlap_ns, overlap_pct FROM comm_overlap('`+label+`', rank := 0)
				ORDER BY CASE stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2 WHEN 'unknown' THEN 3 ELSE 4 END, stage`,
			func(r *sql.Rows) error {
				var c CommOverlapRow
				got = append(got, c)
				return r.Scan(&got[len(got)-1].Stage, &got[len(got)-1].Rank, &got[len(got)-1].CommNS, &got[len(got)-1].CompNS,
					&got[len(got)-1].OverlapNS, &got[len(got)-1].OverlapPct)
			}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, rows) || len(rows) == 0 {
			t.Errorf("run %s: comm_overlap gives %+v, the query %+v", label, got, rows)
		}
	}
}
