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

// launchDB: one decode trace per rank of run 1; kernel A launched three
// times on rank 0 and once on rank 1, kernel B replayed by a graph once
// and once without a launch (ns):
//
//	K1 A [100, 5100)      launch [0, 40)          delay 60
//	K2 A [20000, 35000)   launch [19000, 22000)   delay -2000 (started before the call returned)
//	K3 A [50000, 52000)   launch [40000, 44000)   delay 6000, launch-bound (2000 < 4000)
//	K4 B [60000, 61000)   graph replay of [55000, 55100): no launch of its own
//	K5 B [70000, 70500)   no launch
//	K6 A [100, 200) rank 1, launch [0, 10)        delay 90
//
// Every event but K2 is short (under 10 µs).
func launchDB(t *testing.T) fixture {
	f := newFixture(t)
	f.run(1, "r1")
	f.trace(1, 1, 0, "decode", "formal")
	f.trace(2, 1, 1, "decode", "formal")
	f.name(1, "kernel_a<1>", "kernel_a", "", "gemm", "compute")
	f.name(2, "kernel_b<1>", "kernel_b", "", "norm", "compute")
	f.kernelsOn(0, 7,
		kernel{ID: 1, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 100, Dur: 5000},
		kernel{ID: 2, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 20000, Dur: 15000},
		kernel{ID: 3, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 50000, Dur: 2000},
		kernel{ID: 4, Trace: 1, Run: 1, Stage: "decode", Name: 2, TS: 60000, Dur: 1000},
		kernel{ID: 5, Trace: 1, Run: 1, Stage: "decode", Name: 2, TS: 70000, Dur: 500},
		kernel{ID: 6, Trace: 2, Run: 1, Rank: 1, Stage: "decode", Name: 1, TS: 100, Dur: 100},
	)
	f.exec(`INSERT INTO launches (launch_id, trace_id, name, ts_ns, dur_ns, pid, tid) VALUES
		(11, 1, 'cudaLaunchKernel', 0, 40, 1, 1), (12, 1, 'cudaLaunchKernel', 19000, 3000, 1, 1),
		(13, 1, 'cudaLaunchKernel', 40000, 4000, 1, 1), (14, 1, 'cudaGraphLaunch', 55000, 100, 1, 1),
		(16, 2, 'cudaLaunchKernel', 0, 10, 1, 1)`)
	f.exec(`UPDATE kernels SET launch_id = 10 + kernel_id WHERE kernel_id <> 5`)
	f.exec(`UPDATE kernels SET graph_launch = true WHERE kernel_id = 4`)
	return f
}

func TestLaunchByKernelAndStage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := launchDB(t)
	fl := func(v float64) sql.NullFloat64 { return sql.NullFloat64{Float64: v, Valid: true} }
	in := func(v int64) sql.NullInt64 { return sql.NullInt64{Int64: v, Valid: true} }
	rows, err := LaunchByKernel(ctx, f.db, LaunchParams{Run: 1, Rank: rankOf(0)})
	if err != nil {
		t.Fatal(err)
	}
	// delays sorted -2000, 60, 6000: median 60, p90 at 1.8 = 60 + 0.8 x 5940
	want := []LaunchByKernelRow{
		{Stage: "decode", ShortName: "kernel_a", Events: 3, Launched: 3, LaunchFigures: LaunchFigures{DelayP50NS: fl(60),
			DelayP90NS: fl(4812), DelayMaxNS: in(6000), LaunchP50NS: fl(3000), LaunchMaxNS: in(4000)}, LaunchBound: 1, Short: 2},
		{Stage: "decode", ShortName: "kernel_b", Events: 2, Short: 2},
	}
	if !launchRowsNear(rows, want) {
		t.Errorf("rank 0 kernels:\n got %+v\nwant %+v", rows, want)
	}
	// every rank: delays -2000, 60, 90, 6000: median 75, p90 at 2.7 = 90 + 0.7 x 5910
	rows, err = LaunchByKernel(ctx, f.db, LaunchParams{Run: 1, Stage: sql.NullString{String: "decode", Valid: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Events != 4 || rows[0].Launched != 4 || math.Abs(rows[0].DelayP50NS.Float64-75) > 1e-9 ||
		math.Abs(rows[0].DelayP90NS.Float64-4227) > 1e-9 || rows[0].LaunchP50NS.Float64 != 1520 || rows[0].Short != 3 {
		t.Errorf("every rank: %+v", rows)
	}
	stages, err := LaunchByStage(ctx, f.db, LaunchParams{Run: 1, Rank: rankOf(0)})
	if err != nil {
		t.Fatal(err)
	}
	if len(stages) != 1 {
		t.Fatalf("stages %+v", stages)
	}
	s := stages[0]
	if s.Stage != "decode" || s.Events != 5 || s.Launched != 3 || s.Short != 4 || s.ShortPct != 80 || s.LaunchBound != 1 ||
		math.Abs(s.LaunchBoundPct.Float64-100.0/3) > 1e-9 || s.DelayP50NS.Float64 != 60 || math.Abs(s.DelayP90NS.Float64-4812) > 1e-9 ||
		s.DelayMaxNS.Int64 != 6000 || s.LaunchP50NS.Float64 != 3000 || s.LaunchMaxNS.Int64 != 4000 || s.ShortNS != 10000 {
		t.Errorf("stage %+v", s)
	}
	// the public macros take a label, and the event rows say why
	var delay sql.NullInt64
	var bound, short sql.NullBool
	if err := f.db.QueryRow(`SELECT delay_ns, launch_bound, short FROM launch_events('r1') WHERE kernel_id = 3`).Scan(&delay, &bound, &short); err != nil ||
		delay.Int64 != 6000 || !bound.Bool || !short.Bool {
		t.Errorf("launch_events K3: %v %v %v %v", delay, bound, short, err)
	}
	if err := f.db.QueryRow(`SELECT delay_ns FROM launch_events('r1') WHERE kernel_id = 4`).Scan(&delay); err != nil || delay.Valid {
		t.Errorf("a graph replay has no launch delay: %v %v", delay, err)
	}
}

func launchRowsNear(got, want []LaunchByKernelRow) bool {
	if len(got) != len(want) {
		return false
	}
	// the two interpolations round differently in the last bits
	nf := func(a, b sql.NullFloat64) bool {
		return a.Valid == b.Valid && math.Abs(a.Float64-b.Float64) <= 1e-9*max(1, math.Abs(b.Float64))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Stage != w.Stage || g.ShortName != w.ShortName || g.Events != w.Events || g.Launched != w.Launched ||
			g.LaunchBound != w.LaunchBound || g.Short != w.Short || g.DelayMaxNS != w.DelayMaxNS || g.LaunchMaxNS != w.LaunchMaxNS ||
			!nf(g.DelayP50NS, w.DelayP50NS) || !nf(g.DelayP90NS, w.DelayP90NS) || !nf(g.LaunchP50NS, w.LaunchP50NS) {
			return false
		}
	}
	return true
}

// interpolated is the q-quantile of xs by linear interpolation between
// the order statistics at q x (n-1) (what quantile_cont computes).
func interpolated(xs []int64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo+1 >= len(s) {
		return float64(s[lo])
	}
	return float64(s[lo]) + (pos-float64(lo))*float64(s[lo+1]-s[lo])
}

// TestLaunchByKernelMatchesBruteForce: on every run and rank of the demo,
// each kernel's launch figures are those computed here from its events and
// their launch calls.
func TestLaunchByKernelMatchesBruteForce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := schematest.Open(t, finishedDemoTemplate(t)).DB
	type key struct {
		run, rank   int64
		stage, name string
	}
	type inst struct {
		dur      int64
		launched bool
		delay    int64
		call     int64
	}
	insts := map[key][]inst{}
	err := scanAll(db, `SELECT k.run_id, k.rank, k.stage, n.short_name, k.ts_ns, k.dur_ns, k.graph_launch, l.ts_ns, l.dur_ns
		FROM kernels k JOIN kernel_names n USING (name_id) LEFT JOIN launches l ON l.launch_id = k.launch_id`, func(r *sql.Rows) error {
		var k key
		var ts, dur int64
		var graph bool
		var lts, ldur sql.NullInt64
		if err := r.Scan(&k.run, &k.rank, &k.stage, &k.name, &ts, &dur, &graph, &lts, &ldur); err != nil {
			return err
		}
		i := inst{dur: dur}
		if lts.Valid && !graph {
			i.launched, i.delay, i.call = true, ts-(lts.Int64+ldur.Int64), ldur.Int64
		}
		insts[k] = append(insts[k], i)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var keys []key
	runRanks := map[[2]int64]bool{}
	for k := range insts {
		keys = append(keys, k)
		runRanks[[2]int64{k.run, k.rank}] = true
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.run, b.run), cmp.Compare(a.rank, b.rank), cmp.Compare(a.stage, b.stage), cmp.Compare(a.name, b.name))
	})
	var launchedAny, boundAny int
	for rr := range runRanks {
		rows, err := LaunchByKernel(ctx, db, LaunchParams{Run: rr[0], Rank: rankOf(rr[1])})
		if err != nil {
			t.Fatal(err)
		}
		var want []LaunchByKernelRow
		for _, k := range keys {
			if k.run != rr[0] || k.rank != rr[1] {
				continue
			}
			w := LaunchByKernelRow{Stage: k.stage, ShortName: k.name}
			var delays, calls []int64
			for _, i := range insts[k] {
				w.Events++
				if i.dur < 10000 {
					w.Short++
				}
				if i.launched {
					w.Launched++
					delays, calls = append(delays, i.delay), append(calls, i.call)
					if i.dur < i.call {
						w.LaunchBound++
					}
				}
			}
			if len(delays) > 0 {
				w.DelayP50NS = sql.NullFloat64{Float64: interpolated(delays, 0.5), Valid: true}
				w.DelayP90NS = sql.NullFloat64{Float64: interpolated(delays, 0.9), Valid: true}
				w.DelayMaxNS = sql.NullInt64{Int64: slices.Max(delays), Valid: true}
				w.LaunchP50NS = sql.NullFloat64{Float64: interpolated(calls, 0.5), Valid: true}
				w.LaunchMaxNS = sql.NullInt64{Int64: slices.Max(calls), Valid: true}
				launchedAny++
			}
			boundAny += int(w.LaunchBound)
			want = append(want, w)
		}
		if !launchRowsNear(rows, want) {
			t.Errorf("run %d rank %d: %d rows, want %d", rr[0], rr[1], len(rows), len(want))
			for i := range min(len(rows), len(want)) {
				if !launchRowsNear(rows[i:i+1], want[i:i+1]) {
					t.Errorf("first difference:\n got %+v\nwant %+v", rows[i], want[i])
					break
				}
			}
		}
	}
	if launchedAny == 0 || boundAny == 0 {
		t.Errorf("fixture: the demo has launched (%d) and launch-bound (%d) kernels", launchedAny, boundAny)
	}
}
