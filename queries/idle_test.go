package queries

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// finishedDemoTemplate is testdata/demo ingested and finished (overlap,
// step aggregates and idle rows saved, catalog installed), as `ingest`
// leaves a warehouse: demoTemplate's warehouse, finished.
func finishedDemoTemplate(t testing.TB) string {
	t.Helper()
	return schematest.Derived(t, "demo-finished", demoTemplate(t), func(ctx context.Context, w *schema.Warehouse) error {
		return aggregates.FinishPerRun(ctx, w.DB, catalog.Default())
	})
}

// idleEvent is one GPU event of a step with its launch, as the brute-force
// reference below reads it.
type idleEvent struct {
	kernel, trace, rank, step, device, stream int64
	stage                                     string
	ts, end                                   int64
	graph                                     bool
	launch                                    sql.NullInt64
	launchTS, pid, tid                        sql.NullInt64
}

type idleCall struct{ trace, pid, tid, ts, end int64 }

// idleGap is one gap as _idle_gaps_for gives it.
type idleGap struct {
	trace, rank, step, device int64
	stage, scope              string
	stream                    sql.NullInt64
	kernel, prev, start, gap  int64
	cause                     string
}

// bruteIdleGaps finds every gap of events and its cause straight from the
// definitions of sqllib/idle.sql, pairwise: the prev event of each event is
// the one among those before it (by start, then kernel id) with the latest
// end (ties: the higher kernel id); a blocking call counts when any call on
// the launching thread began at or before the launch and ended after the
// gap began.
func bruteIdleGaps(events []idleEvent, calls []idleCall, launchGap int64) []idleGap {
	type key struct {
		trace, rank, step, device int64
		stage, scope              string
		stream                    int64
	}
	groups := map[key][]idleEvent{}
	for _, e := range events {
		groups[key{e.trace, e.rank, e.step, e.device, e.stage, "device", -1}] = append(
			groups[key{e.trace, e.rank, e.step, e.device, e.stage, "device", -1}], e)
		groups[key{e.trace, e.rank, e.step, e.device, e.stage, "stream", e.stream}] = append(
			groups[key{e.trace, e.rank, e.step, e.device, e.stage, "stream", e.stream}], e)
	}
	var out []idleGap
	for k, es := range groups {
		slices.SortFunc(es, func(a, b idleEvent) int {
			return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.kernel, b.kernel))
		})
		for i, next := range es {
			if i == 0 {
				continue
			}
			prev := es[0]
			for _, e := range es[1:i] {
				if e.end > prev.end || (e.end == prev.end && e.kernel > prev.kernel) {
					prev = e
				}
			}
			if prev.end >= next.ts {
				continue
			}
			g := idleGap{trace: k.trace, rank: k.rank, step: k.step, device: k.device, stage: k.stage, scope: k.scope,
				kernel: next.kernel, prev: prev.kernel, start: prev.end, gap: next.ts - prev.end}
			if k.scope == "stream" {
				g.stream = sql.NullInt64{Int64: k.stream, Valid: true}
			}
			blocked := false
			for _, c := range calls {
				if next.launchTS.Valid && next.pid.Valid && next.tid.Valid && c.trace == next.trace &&
					c.pid == next.pid.Int64 && c.tid == next.tid.Int64 && c.ts <= next.launchTS.Int64 && c.end > g.start {
					blocked = true
				}
			}
			switch {
			case next.graph && prev.graph && next.launch.Valid && next.launch == prev.launch:
				g.cause = "graph_internal"
			case blocked:
				g.cause = "sync"
			case next.launchTS.Valid && next.launchTS.Int64 > g.start:
				g.cause = "host_bound"
			case next.launchTS.Valid && g.gap < launchGap:
				g.cause = "launch_latency"
			default:
				g.cause = "other"
			}
			out = append(out, g)
		}
	}
	sortIdleGaps(out)
	return out
}

func sortIdleGaps(gs []idleGap) {
	slices.SortFunc(gs, func(a, b idleGap) int {
		return cmp.Or(cmp.Compare(a.trace, b.trace), cmp.Compare(a.scope, b.scope),
			cmp.Compare(a.stream.Int64, b.stream.Int64), cmp.Compare(a.kernel, b.kernel))
	})
}

// TestIdleGapsMatchBruteForce: on every run of the demo, _idle_gaps_for
// gives exactly the gaps and causes of the pairwise reference, at the
// default launch gap and at one that reclassifies; every run has gaps.
func TestIdleGapsMatchBruteForce(t *testing.T) {
	t.Parallel()
	db := schematest.Open(t, finishedDemoTemplate(t)).DB
	var calls []idleCall
	rows, err := db.Query(`SELECT trace_id, pid, tid, ts_ns, ts_ns + dur_ns FROM launches
		WHERE name IN ('cudaStreamSynchronize', 'cudaDeviceSynchronize', 'cudaEventSynchronize', 'cudaMemcpy')`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c idleCall
		if err := rows.Scan(&c.trace, &c.pid, &c.tid, &c.ts, &c.end); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
	}
	rows.Close()
	if len(calls) == 0 {
		t.Fatal("fixture: the demo has synchronize calls")
	}
	var runs []int64
	if err := scanAll(db, `SELECT run_id FROM runs ORDER BY run_id`, func(r *sql.Rows) error {
		var id int64
		err := r.Scan(&id)
		runs = append(runs, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, run := range runs {
		var events []idleEvent
		err := scanAll(db, fmt.Sprintf(`SELECT k.kernel_id, k.trace_id, k.rank, k.step, k.device, k.stream, k.stage,
				k.ts_ns, k.ts_ns + k.dur_ns, k.graph_launch, k.launch_id, l.ts_ns, l.pid, l.tid
			FROM kernels k LEFT JOIN launches l USING (launch_id)
			WHERE k.run_id = %d AND k.step IS NOT NULL`, run), func(r *sql.Rows) error {
			var e idleEvent
			err := r.Scan(&e.kernel, &e.trace, &e.rank, &e.step, &e.device, &e.stream, &e.stage, &e.ts, &e.end,
				&e.graph, &e.launch, &e.launchTS, &e.pid, &e.tid)
			events = append(events, e)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, gapNS := range []int64{30000, 2000} {
			want := bruteIdleGaps(events, calls, gapNS)
			var got []idleGap
			err := scanAll(db, fmt.Sprintf(`SELECT trace_id, rank, step, device, stage, scope, stream, kernel_id,
					prev_kernel_id, gap_start_ns, gap_ns, cause
				FROM _idle_gaps_for(%d, launch_gap_ns := %d)`, run, gapNS), func(r *sql.Rows) error {
				var g idleGap
				err := r.Scan(&g.trace, &g.rank, &g.step, &g.device, &g.stage, &g.scope, &g.stream, &g.kernel,
					&g.prev, &g.start, &g.gap, &g.cause)
				got = append(got, g)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			sortIdleGaps(got)
			if len(want) == 0 {
				t.Fatalf("run %d: no gaps in the reference", run)
			}
			if !slices.Equal(got, want) {
				t.Errorf("run %d, launch gap %d: %d gaps, want %d", run, gapNS, len(got), len(want))
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Errorf("first difference: got %+v, want %+v", got[i], want[i])
						break
					}
				}
			}
		}
	}
}

// TestIdleStepsAddUp: on the demo, every step's busy time plus its idle
// time by cause is its step time exactly (step_total_store's window and
// busy time, per device); the saved rows are the computed ones; and the
// eager and CUDA-graph decode runs differ as the issue describes (most of
// the eager run's idle time host-bound, graph-internal gaps only in the
// graph run).
func TestIdleStepsAddUp(t *testing.T) {
	t.Parallel()
	db := schematest.Open(t, finishedDemoTemplate(t)).DB
	var n, bad int64
	err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE NOT (
			i.window_ns = t.window_ns AND i.busy_ns = t.busy_ns
			AND i.busy_ns + i.host_bound_ns + i.launch_latency_ns + i.sync_ns + i.graph_internal_ns + i.other_ns = t.window_ns))
		FROM step_total_store t
		JOIN idle_step_store i USING (run_id, trace_id, rank, stage, step)
		WHERE i.scope = 'device'`).Scan(&n, &bad)
	if err != nil {
		t.Fatal(err)
	}
	var steps int64
	if err := db.QueryRow(`SELECT count(*) FROM step_total_store`).Scan(&steps); err != nil {
		t.Fatal(err)
	}
	if n != steps || bad != 0 || n == 0 {
		t.Errorf("%d device rows for %d steps, %d not adding up", n, steps, bad)
	}
	if err := db.QueryRow(`SELECT count(*) FROM idle_step_store WHERE scope = 'stream'
			AND busy_ns + host_bound_ns + launch_latency_ns + sync_ns + graph_internal_ns + other_ns <> window_ns`).Scan(&bad); err != nil || bad != 0 {
		t.Errorf("stream rows not adding up: %d (%v)", bad, err)
	}
	for _, q := range []string{
		`SELECT * FROM idle_step_store EXCEPT ALL SELECT * FROM _idle_steps_for(NULL, runs := (SELECT list(run_id) FROM runs))`,
		`SELECT * FROM _idle_steps_for(NULL, runs := (SELECT list(run_id) FROM runs)) EXCEPT ALL SELECT * FROM idle_step_store`,
		`SELECT * FROM idle_gap_store EXCEPT ALL SELECT * FROM _idle_worst_gaps_for(NULL, runs := (SELECT list(run_id) FROM runs))`,
		`SELECT * FROM _idle_worst_gaps_for(NULL, runs := (SELECT list(run_id) FROM runs)) EXCEPT ALL SELECT * FROM idle_gap_store`,
	} {
		if err := db.QueryRow(`SELECT count(*) FROM (` + q + `)`).Scan(&bad); err != nil || bad != 0 {
			t.Errorf("saved and computed rows differ by %d (%v): %s", bad, err, q)
		}
	}
	causes := func(run string) (host, graph, idle int64) {
		t.Helper()
		if err := db.QueryRow(`SELECT sum(host_bound_ns), sum(graph_internal_ns), sum(idle_ns) FROM idle_steps(?)
			WHERE scope = 'device' AND stage = 'decode' AND rank = 0`, run).Scan(&host, &graph, &idle); err != nil {
			t.Fatal(err)
		}
		return
	}
	eh, eg, ei := causes("sglang-llama")
	gh, gg, gi := causes("sglang-formal")
	if !(eh*2 > ei && eg == 0 && gg > 0 && gi < ei) {
		t.Errorf("eager decode: host-bound %d of %d idle, graph-internal %d; graph decode: %d of %d idle, graph-internal %d",
			eh, ei, eg, gh, gi, gg)
	}
}

func scanAll(db *sql.DB, q string, row func(*sql.Rows) error) error {
	rows, err := db.Query(q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// TestIdleByStage: the triage rows of the demo's eager SGLang run add up,
// per stage and scope, to the step time summed independently from the
// kernels (non-edge steps, rank 0: last end minus first start per step and
// device); the longest gap of each stage is the longest device gap of
// _idle_gaps_for there; a stale copy is not read, and the computed rows
// are the same.
func TestIdleByStage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := schematest.Open(t, finishedDemoTemplate(t)).DB
	var run int64
	if err := db.QueryRow(`SELECT run_id FROM runs WHERE label = 'sglang-llama'`).Scan(&run); err != nil {
		t.Fatal(err)
	}
	fresh, err := IdleFresh(ctx, db, run, sql.NullString{})
	if err != nil || !fresh {
		t.Fatalf("after Finish the saved idle rows are current: %v %v", fresh, err)
	}
	// with the overlap fingerprint given, as triage passes it
	ofp, err := OverlapFingerprint(ctx, db, run)
	if err != nil {
		t.Fatal(err)
	}
	if fresh, err := IdleFresh(ctx, db, run, ofp); err != nil || !fresh {
		t.Fatalf("with the overlap fingerprint given: %v %v", fresh, err)
	}
	rank0 := sql.NullInt64{Int64: 0, Valid: true}
	p := IdleParams{Run: run, Rank: rank0, Gaps: 2, Fresh: true}
	rows, err := IdleByStage(ctx, db, p)
	if err != nil {
		t.Fatal(err)
	}
	windows := map[string]int64{}
	if err := scanAll(db, fmt.Sprintf(`SELECT k.stage, sum(w) FROM (
			SELECT k.stage, max(k.ts_ns + k.dur_ns) - min(k.ts_ns) AS w
			FROM kernels k JOIN steps s ON s.trace_id = k.trace_id AND s.step = k.step
			WHERE k.run_id = %d AND k.rank = 0 AND NOT s.edge
			GROUP BY k.trace_id, k.stage, k.step, k.device) k GROUP BY k.stage`, run), func(r *sql.Rows) error {
		var st string
		var w int64
		err := r.Scan(&st, &w)
		windows[st] = w
		return err
	}); err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	for _, r := range rows {
		if r.Scope == "device" {
			sums[r.Stage] += r.NS
			if r.WindowNS != windows[r.Stage] || r.LaunchGapNS != 30000 {
				t.Errorf("%s: window %d, want %d (launch gap %d)", r.Stage, r.WindowNS, windows[r.Stage], r.LaunchGapNS)
			}
		}
	}
	if len(windows) != 2 {
		t.Fatalf("fixture: want prefill and decode, got %v", windows)
	}
	for st, w := range windows {
		if sums[st] != w {
			t.Errorf("%s: parts add up to %d, step time %d", st, sums[st], w)
		}
	}
	gaps, err := IdleWorstGaps(ctx, db, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(gaps) != 4 {
		t.Fatalf("want 2 gaps per stage, got %d", len(gaps))
	}
	for _, g := range gaps[:1] {
		var longest int64
		if err := db.QueryRow(fmt.Sprintf(`SELECT max(gap_ns) FROM _idle_gaps_for(%d) g
				JOIN steps s ON s.trace_id = g.trace_id AND s.step = g.step
				WHERE g.scope = 'device' AND g.rank = 0 AND g.stage = '%s' AND NOT s.edge`, run, g.Stage)).Scan(&longest); err != nil {
			t.Fatal(err)
		}
		if g.GapNS != longest || g.Before == "" || g.After == "" {
			t.Errorf("%s: longest gap %+v, want %d ns", g.Stage, g, longest)
		}
	}
	steps, err := IdleByStep(ctx, db, IdleParams{Run: run, Rank: rank0, Steps: 5, Fresh: true})
	if err != nil || len(steps) == 0 {
		t.Fatalf("by step: %d rows, %v", len(steps), err)
	}
	p.Fresh = false
	computed, err := IdleByStage(ctx, db, p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(computed, rows) {
		t.Error("computed rows differ from the saved ones")
	}
	// The saved rows are read through the *_saved twins (IdleParams.twins): the
	// same rows as computed, for each of the three queries.
	if computedGaps, err := IdleWorstGaps(ctx, db, p); err != nil || !slices.Equal(computedGaps, gaps) {
		t.Errorf("computed gaps differ from the saved ones (%v):\n%+v\n%+v", err, computedGaps, gaps)
	}
	if computedSteps, err := IdleByStep(ctx, db, IdleParams{Run: run, Rank: rank0, Steps: 5}); err != nil || !slices.Equal(computedSteps, steps) {
		t.Errorf("computed steps differ from the saved ones (%v)", err)
	}
	// A saved row changed shows the saved path is what Fresh reads.
	if _, err := db.Exec(`UPDATE idle_step_store SET busy_ns = busy_ns + 1, window_ns = window_ns + 1 WHERE run_id = ?`, run); err != nil {
		t.Fatal(err)
	}
	p.Fresh = true
	if marked, err := IdleByStage(ctx, db, p); err != nil || slices.Equal(marked, rows) {
		t.Errorf("Fresh must read the saved rows (%v)", err)
	}
	p.Fresh = false
	if _, err := db.Exec(`UPDATE kernels SET step = NULL WHERE kernel_id = (SELECT min(kernel_id) FROM kernels WHERE run_id = ?)`, run); err != nil {
		t.Fatal(err)
	}
	if fresh, err := IdleFresh(ctx, db, run, sql.NullString{}); err != nil || fresh {
		t.Errorf("a kernel moved out of its step: the saved rows must read as stale (%v %v)", fresh, err)
	}
	if fresh, err := IdleFresh(ctx, db, run, ofp); err != nil || fresh {
		t.Errorf("a kernel moved out of its step, overlap fingerprint given: must read as stale (%v %v)", fresh, err)
	}
}

// TestTriageIdle: a triage report carries the idle rows of its run, rank
// and stage, read from the saved copy, and each stage's three longest gaps.
func TestTriageIdle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := schematest.Open(t, finishedDemoTemplate(t)).DB
	var run int64
	if err := db.QueryRow(`SELECT run_id FROM runs WHERE label = 'sglang-formal'`).Scan(&run); err != nil {
		t.Fatal(err)
	}
	rank1 := sql.NullInt64{Int64: 1, Valid: true}
	d, err := Triage(ctx, db, TriageParams{Run: run, Rank: rank1, MinShare: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := IdleParams{Run: run, Rank: rank1, Gaps: DefaultIdleGaps}
	want, err := IdleByStage(ctx, db, p)
	if err != nil {
		t.Fatal(err)
	}
	gaps, err := IdleWorstGaps(ctx, db, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || !slices.Equal(d.Idle, want) || !slices.Equal(d.IdleGaps, gaps) || len(gaps) != 2*DefaultIdleGaps {
		t.Errorf("triage idle rows: %d, want %d; gaps %d, want %d", len(d.Idle), len(want), len(d.IdleGaps), len(gaps))
	}
	for _, g := range d.IdleGaps {
		if g.Rank != 1 {
			t.Errorf("gap of rank %d in a rank-1 report", g.Rank)
		}
	}
}

// TestIdleByStep: on the demo's eager SGLang run with every rank, each
// (stage, rank, step)'s parts add up to its step time, which is the
// kernels' last end minus first start per device, summed over the rank's
// devices (computed here from the kernels); the first n pairs of each
// stage are those in step, then rank order, and stage_steps counts them
// all.
func TestIdleByStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := schematest.Open(t, finishedDemoTemplate(t)).DB
	var run int64
	if err := db.QueryRow(`SELECT run_id FROM runs WHERE label = 'sglang-llama'`).Scan(&run); err != nil {
		t.Fatal(err)
	}
	type key struct {
		stage      string
		rank, step int64
	}
	windows := map[key]int64{}
	perStage := map[string][]key{}
	if err := scanAll(db, fmt.Sprintf(`SELECT stage, rank, step, sum(w) FROM (
			SELECT k.stage, k.rank, k.step, max(k.ts_ns + k.dur_ns) - min(k.ts_ns) AS w
			FROM kernels k JOIN steps s ON s.trace_id = k.trace_id AND s.step = k.step
			WHERE k.run_id = %d AND NOT s.edge
			GROUP BY k.trace_id, k.stage, k.rank, k.step, k.device) GROUP BY stage, rank, step`, run), func(r *sql.Rows) error {
		var k key
		var w int64
		err := r.Scan(&k.stage, &k.rank, &k.step, &w)
		windows[k] = w
		perStage[k.stage] = append(perStage[k.stage], k)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const n = 4
	rows, err := IdleByStep(ctx, db, IdleParams{Run: run, Steps: n, Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	sums := map[key]int64{}
	got := map[string][]key{}
	for _, r := range rows {
		k := key{r.Stage, r.Rank, r.Step}
		if r.WindowNS != windows[k] || r.StageSteps != int64(len(perStage[r.Stage])) {
			t.Errorf("%+v: window %d of %d steps, want %d of %d", k, r.WindowNS, r.StageSteps, windows[k], len(perStage[r.Stage]))
		}
		if g := got[r.Stage]; len(g) == 0 || g[len(g)-1] != k {
			got[r.Stage] = append(got[r.Stage], k)
		}
		sums[k] += r.NS
	}
	for stage, ks := range perStage {
		slices.SortFunc(ks, func(a, b key) int { return cmp.Or(cmp.Compare(a.step, b.step), cmp.Compare(a.rank, b.rank)) })
		want := ks[:min(n, len(ks))]
		if !slices.Equal(got[stage], want) {
			t.Errorf("%s: steps %v, want %v", stage, got[stage], want)
		}
		for _, k := range want {
			if sums[k] != windows[k] {
				t.Errorf("%+v: parts add up to %d, window %d", k, sums[k], windows[k])
			}
		}
	}
	if len(got) < 2 {
		t.Errorf("stages %v", got)
	}
}
