package queries

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// stragglerDB is run r1 with three ranks in decode (traces 1-3) and two in
// prefill (traces 4-5); times in ns, steps by start (step 3 an edge step).
//
//	decode step 1  all-reduce @ar call 1: r0 1000, r1 1300, r2 1100
//	                 last r1; waits 300, 0, 200
//	               all-reduce @ar call 2: r0 2000, r1 2050, r2 2400
//	                 last r2; waits 400, 350, 0
//	               all-gather @ag: every rank at 3000: no last rank
//	               a gemm on r0 (not communication)
//	decode step 2  all-reduce @ar: r0 10000, r1 10500, r2 10500
//	                 r1 and r2 tie last: r1 (the lower); waits 500, 0, 0
//	               all-gather @ag: r0 twice, r1 and r2 once: not matched
//	               all-reduce without a site on r0 only: not matched
//	decode step 3  (edge) all-reduce @ar: r0 20000, r1 29000: left out
//	prefill step 1 all-reduce @ar: r0 100, r1 50: last r0; r1 waits 50
func stragglerDB(t *testing.T) fixture {
	f := newFixture(t)
	f.run(1, "r1")
	for i, rank := range []int{0, 1, 2} {
		f.trace(1+i, 1, rank, "decode", "formal")
	}
	f.trace(4, 1, 0, "prefill", "formal")
	f.trace(5, 1, 1, "prefill", "formal")
	f.name(1, "ncclDevKernel_AllReduce_Sum_bf16", "ncclDevKernel_AllReduce_Sum_bf16", "", "nccl", "communication")
	f.name(2, "ncclDevKernel_AllGather_RING_LL", "ncclDevKernel_AllGather_RING_LL", "", "nccl", "communication")
	f.name(3, "gemm_kernel<1>", "gemm", "", "gemm", "compute")
	f.site(10, "/w/parallel_state.py", 637, "_all_reduce_in_place", "parallel_state.py")
	f.site(11, "/w/parallel_state.py", 761, "all_gather", "parallel_state.py")
	var ks []kernel
	id := int64(0)
	add := func(trace, rank int, stage string, name int, ts int64, site int64) {
		id++
		ks = append(ks, kernel{ID: id, Trace: trace, Run: 1, Rank: rank, Stage: stage, Name: name, TS: ts, Dur: 40,
			Device: ptr(int64(rank)), Stream: ptr(20), Site: site})
	}
	for r, ts := range []int64{1000, 1300, 1100} {
		add(1+r, r, "decode", 1, ts, 10)
	}
	for r, ts := range []int64{2000, 2050, 2400} {
		add(1+r, r, "decode", 1, ts, 10)
	}
	for r := range 3 {
		add(1+r, r, "decode", 2, 3000, 11)
	}
	add(1, 0, "decode", 3, 5000, 0)
	for r, ts := range []int64{10000, 10500, 10500} {
		add(1+r, r, "decode", 1, ts, 10)
	}
	add(1, 0, "decode", 2, 11000, 11)
	add(1, 0, "decode", 2, 11500, 11)
	add(2, 1, "decode", 2, 11000, 11)
	add(3, 2, "decode", 2, 11000, 11)
	add(1, 0, "decode", 1, 12000, 0)
	add(1, 0, "decode", 1, 20000, 10)
	add(2, 1, "decode", 1, 29000, 10)
	add(4, 0, "prefill", 1, 100, 10)
	add(5, 1, "prefill", 1, 50, 10)
	f.kernels(ks...)
	f.exec(`UPDATE kernels SET step = CASE WHEN ts_ns < 9000 THEN 1 WHEN ts_ns < 19000 THEN 2 ELSE 3 END`)
	for trace := 1; trace <= 3; trace++ {
		f.exec(`INSERT INTO steps (trace_id, step, source, name, stage, edge) VALUES
			(?, 1, 'step_annotation', 'd', 'decode', false), (?, 2, 'step_annotation', 'd', 'decode', false),
			(?, 3, 'step_annotation', 'd', 'decode', true)`, trace, trace, trace)
	}
	f.exec(`INSERT INTO steps (trace_id, step, source, name, stage, edge) VALUES
		(4, 1, 'step_annotation', 'p', 'prefill', false), (5, 1, 'step_annotation', 'p', 'prefill', false)`)
	return f
}

func TestStragglerRanks(t *testing.T) {
	t.Parallel()
	f := stragglerDB(t)
	ctx := context.Background()
	got, err := StragglerRanks(ctx, f.db, StragglerParams{Run: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []StragglerRankRow{
		{Stage: "prefill", Rank: 0, Collectives: 1, Last: 1, LastPct: 100, CausedWaitNS: 50, Straggler: true},
		{Stage: "prefill", Rank: 1, Collectives: 1, WaitNS: 50},
		{Stage: "decode", Rank: 0, Collectives: 4, WaitNS: 300 + 400 + 500},
		{Stage: "decode", Rank: 1, Collectives: 4, Last: 2, LastPct: 50, CausedWaitNS: 500 + 500, WaitNS: 350, Straggler: true},
		{Stage: "decode", Rank: 2, Collectives: 4, Last: 1, LastPct: 25, CausedWaitNS: 400 + 350, WaitNS: 200},
	}
	if !slices.Equal(got, want) {
		t.Errorf("ranks\n got %+v\nwant %+v", got, want)
	}
	sites, err := StragglerSites(ctx, f.db, StragglerParams{Run: 1, Stage: sql.NullString{String: "decode", Valid: true}})
	if err != nil {
		t.Fatal(err)
	}
	site := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	wantSites := []StragglerSiteRow{
		{Stage: "decode", Kernel: "ncclDevKernel_AllReduce_Sum_bf16", Site: site("_all_reduce_in_place @ parallel_state.py:637"),
			Collectives: 3, Steps: 2, Ranks: 3, LastRank: rankOf(1), Last: 2, WaitNS: 500 + 750 + 500,
			SkewP50NS: 400, SkewMaxNS: 500},
		{Stage: "decode", Kernel: "ncclDevKernel_AllGather_RING_LL", Site: site("all_gather @ parallel_state.py:761"),
			Collectives: 1, Steps: 1, Ranks: 3},
	}
	if !slices.Equal(sites, wantSites) {
		t.Errorf("sites\n got %+v\nwant %+v", sites, wantSites)
	}
	// One collective's arrivals, by label.
	type arr struct{ rank, wait, last int64 }
	var arrs []arr
	if err := scanAll(f.db, `SELECT rank, wait_ns, last_rank FROM straggler_arrivals('r1')
			WHERE stage = 'decode' AND step = 1 AND name_id = 1 AND call = 2 ORDER BY rank`, func(r *sql.Rows) error {
		var a arr
		err := r.Scan(&a.rank, &a.wait, &a.last)
		arrs = append(arrs, a)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if want := []arr{{0, 400, 2}, {1, 350, 2}, {2, 0, 2}}; !slices.Equal(arrs, want) {
		t.Errorf("arrivals %+v, want %+v", arrs, want)
	}
}

// TestStragglerMatchesBruteForce: on the demo's multi-rank runs, the
// ranks' and sites' figures are those of a reference written here from the
// definition (calls grouped per rank, stage, non-edge step, kernel and
// site, matched by their order where every rank has as many; the latest
// start is the last arrival, ties to the lower rank).
func TestStragglerMatchesBruteForce(t *testing.T) {
	t.Parallel()
	db := schematest.Open(t, finishedDemoTemplate(t)).DB
	type call struct {
		run, rank, step, name, site, ts, kernel int64
		stage, short, display                   string
	}
	var calls []call
	if err := scanAll(db, `SELECT k.run_id, k.rank, k.step, k.name_id, coalesce(k.site_id, -1), k.ts_ns, k.kernel_id, k.stage,
				n.short_name, coalesce(p.display, '')
			FROM kernels k JOIN kernel_names n USING (name_id) JOIN steps s ON s.trace_id = k.trace_id AND s.step = k.step
			LEFT JOIN sites p ON p.site_id = k.site_id
			WHERE n.category = 'communication' AND NOT s.edge`, func(r *sql.Rows) error {
		var c call
		err := r.Scan(&c.run, &c.rank, &c.step, &c.name, &c.site, &c.ts, &c.kernel, &c.stage, &c.short, &c.display)
		calls = append(calls, c)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	type group struct {
		run, step, name, site int64
		stage                 string
	}
	perRank := map[group]map[int64][]call{}
	for _, c := range calls {
		g := group{c.run, c.step, c.name, c.site, c.stage}
		if perRank[g] == nil {
			perRank[g] = map[int64][]call{}
		}
		perRank[g][c.rank] = append(perRank[g][c.rank], c)
	}
	type rankKey struct {
		run, rank int64
		stage     string
	}
	type rankFig struct{ collectives, last, caused, wait int64 }
	ranks := map[rankKey]*rankFig{}
	fig := func(k rankKey) *rankFig {
		if ranks[k] == nil {
			ranks[k] = &rankFig{}
		}
		return ranks[k]
	}
	type siteKey struct {
		run                 int64
		stage, kernel, site string
	}
	type siteFig struct {
		collectives, ranks, wait int64
		steps                    map[int64]bool
		lastBy                   map[int64]int64
		skews                    []int64
	}
	sites := map[siteKey]*siteFig{}
	runs := map[int64]bool{}
	for g, byRank := range perRank {
		n := -1
		ok := len(byRank) >= 2
		for _, cs := range byRank {
			if n >= 0 && len(cs) != n {
				ok = false
			}
			n = len(cs)
			slices.SortFunc(cs, func(a, b call) int { return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.kernel, b.kernel)) })
		}
		if !ok {
			continue
		}
		runs[g.run] = true
		var any call
		for _, cs := range byRank {
			any = cs[0]
		}
		sk := siteKey{g.run, g.stage, any.short, any.display}
		sf := sites[sk]
		if sf == nil {
			sf = &siteFig{steps: map[int64]bool{}, lastBy: map[int64]int64{}}
			sites[sk] = sf
		}
		sf.steps[g.step] = true
		sf.ranks = max(sf.ranks, int64(len(byRank)))
		for i := range n {
			var last, first int64 = -1 << 62, 1 << 62
			lastRank := int64(-1)
			for r, cs := range byRank {
				ts := cs[i].ts
				first = min(first, ts)
				if ts > last || (ts == last && r < lastRank) {
					last, lastRank = ts, r
				}
			}
			var total int64
			for r, cs := range byRank {
				f := fig(rankKey{g.run, r, g.stage})
				f.collectives++
				f.wait += last - cs[i].ts
				total += last - cs[i].ts
			}
			if last > first {
				f := fig(rankKey{g.run, lastRank, g.stage})
				f.last++
				f.caused += total
				sf.lastBy[lastRank]++
			}
			sf.collectives++
			sf.wait += total
			sf.skews = append(sf.skews, last-first)
		}
	}
	if len(runs) < 4 {
		t.Fatalf("%d demo runs with matched collectives, want the four TP-2 runs at least", len(runs))
	}
	checked := 0
	seen := map[rankKey]bool{}
	for run := range runs {
		rows, err := StragglerRanks(context.Background(), db, StragglerParams{Run: run})
		if err != nil {
			t.Fatal(err)
		}
		best := map[string]rankKey{}
		for _, r := range rows {
			k := rankKey{run, r.Rank, r.Stage}
			w := fig(k)
			if r.Collectives != w.collectives || r.Last != w.last || r.CausedWaitNS != w.caused || r.WaitNS != w.wait {
				t.Errorf("run %d %s rank %d: %+v, want %+v", run, r.Stage, r.Rank, r, *w)
			}
			seen[k] = true
			checked++
			if b, ok := best[r.Stage]; !ok || w.last > fig(b).last ||
				(w.last == fig(b).last && (w.caused > fig(b).caused || (w.caused == fig(b).caused && r.Rank < b.rank))) {
				best[r.Stage] = k
			}
		}
		for _, r := range rows {
			want := best[r.Stage].rank == r.Rank && fig(best[r.Stage]).last > 0
			if r.Straggler != want {
				t.Errorf("run %d %s rank %d: straggler %v, want %v", run, r.Stage, r.Rank, r.Straggler, want)
			}
		}
	}
	for k := range ranks {
		if !seen[k] {
			t.Errorf("no row for %+v", k)
		}
	}
	if checked == 0 {
		t.Fatal("no rank checked")
	}
	for run := range runs {
		rows, err := StragglerSites(context.Background(), db, StragglerParams{Run: run})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			k := siteKey{run, r.Stage, r.Kernel, r.Site.String}
			w := sites[k]
			if w == nil {
				t.Errorf("run %d: unexpected site row %+v", run, r)
				continue
			}
			delete(sites, k)
			slices.Sort(w.skews)
			lastRank, last := int64(-1), int64(0)
			for rk, n := range w.lastBy {
				if n > last || (n == last && rk < lastRank) {
					lastRank, last = rk, n
				}
			}
			got := []int64{r.Collectives, r.Steps, r.Ranks, r.Last, r.WaitNS, r.SkewP50NS, r.SkewMaxNS}
			want := []int64{w.collectives, int64(len(w.steps)), w.ranks, last, w.wait,
				w.skews[(len(w.skews)-1)/2], w.skews[len(w.skews)-1]}
			if !slices.Equal(got, want) || r.LastRank.Valid != (last > 0) || (last > 0 && r.LastRank.Int64 != lastRank) {
				t.Errorf("run %d site %+v: %+v, want %v last rank %d", run, k, r, want, lastRank)
			}
		}
	}
	for k := range sites {
		t.Errorf("no site row for %+v", k)
	}
	t.Logf("%d stage-rank rows checked over %d runs", checked, len(runs))
}
