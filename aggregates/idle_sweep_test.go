package aggregates

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestSweepIdleMatchesSQL: the idle rows the step save sweeps in Go
// (idle_step_store, idle_gap_store) are, row for row, what the SQL macros
// _idle_steps_for and _idle_worst_gaps_for compute (sqllib/idle.sql, the
// one definition, which readers without a current copy and lakes use), and
// what a pairwise brute force finds from the definitions: every gap, its
// cause, a step's busy time as the union of its events' intervals. Checked
// on random events in steps (edge steps, a step without a steps row, events
// in none), several devices and streams (NULL ones too), ties of starts and
// ends, zero-length events, graph replays (events sharing a graph launch),
// launches long before and after a gap's start (host-bound and short launch
// gaps), launches without a launch row, and synchronize and memcpy calls on
// the launching threads; two runs, three traces, a trace with two ranks;
// saved run by run and as one batch, in ranges of several steps and all
// at once (and, past the step limit, by the SQL itself). Ranges of one
// step each (chunk 1: three statements a step, a third of the test's time)
// went: the seven changes to the ranges that failed them (either step
// bound of idle_sweep_kernels.sql or idle_sweep_groups.sql off by one, the
// lower trace bound inclusive, the range sized without its first step,
// the longest gaps kept per range) fail the ranges of several steps too,
// which also fail four a one-step range cannot show (a range's events,
// steps, launches or blocking calls read for one of its traces only;
// bench/README.md, "Seventy-fourth figures").
func TestSweepIdleMatchesSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := schematest.Open(t, "").DB
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO runs (run_id, label, ingested_at) VALUES (1, 'a', TIMESTAMP '2026-01-01'), (2, 'b', TIMESTAMP '2026-01-01')`)
	for trace := 1; trace <= 3; trace++ {
		exec(`INSERT INTO traces BY NAME SELECT
			?::INTEGER AS trace_id, ?::INTEGER AS run_id, 't' || ? AS path, 'hash-' || ? AS content_hash,
			0 AS bytes, 0 AS json_bytes, false AS compressed, 0 AS rank, false AS rank_assumed,
			'decode' AS stage, 'flag' AS stage_source, 'formal' AS role, 'flag' AS role_source,
			false AS merged, 'sglang' AS framework, 0 AS events, 0 AS kernel_events, 0 AS memcpy_events,
			0 AS memset_events, 0 AS launch_events, 0 AS graph_launches, 0 AS cpu_op_events,
			0 AS py_frame_events, 0 AS annotation_events, 0 AS flow_events, 0 AS counter_events,
			0 AS instant_events, 0 AS metadata_events, 0 AS other_events, 0 AS warnings,
			TIMESTAMP '2026-01-01' AS ingested_at`, trace, 1+(trace-1)/2, trace, trace)
		// steps 1-5, the first and last at the profiler's edges; step 6
		// has events but no row (so none of its gaps is among the longest)
		for step := 1; step <= 5; step++ {
			exec(`INSERT INTO steps (trace_id, step, source, name, edge) VALUES (?, ?, 'step_annotation', 's', ?)`,
				trace, step, step == 1 || step == 5)
		}
	}
	exec(`INSERT INTO kernel_names (name_id, name, short_name, base_name, family, category) VALUES
		(1, 'gemm', 'gemm', 'gemm', 'gemm', 'compute'), (2, 'nccl', 'nccl', 'nccl', 'communication', 'communication')`)

	rng := rand.New(rand.NewPCG(3, 5))
	var kernels, launches []string
	for trace := 1; trace <= 3; trace++ {
		run := 1 + (trace-1)/2
		base := int64(trace) << 32
		// Blocking calls on thread 1 (synchronize) and 2 (memcpy), one
		// after another on each thread as a thread's calls are.
		for tid, name := range map[int]string{1: "cudaStreamSynchronize", 2: "cudaMemcpyAsync"} {
			if tid == 2 {
				name = "cudaMemcpy"
			}
			at := int64(0)
			for i := range 40 {
				at += 1 + rng.Int64N(60000)
				dur := rng.Int64N(40000)
				launches = append(launches, fmt.Sprintf("(%d, %d, '%s', %d, %d, 1, %d, NULL)",
					base+int64(100000+tid*1000+i), trace, name, at, dur, tid))
				at += dur
			}
		}
		var graph int64 // the launch of the current graph replay, if any
		for i := range 400 {
			rank := 0
			if trace == 3 {
				rank = rng.IntN(2)
			}
			step := "NULL"
			if s := rng.IntN(14); s < 12 {
				step = fmt.Sprint(1 + s/2)
			}
			device, stream := "NULL", "NULL"
			if d := rng.IntN(4); d < 2 {
				device = fmt.Sprint(d)
			}
			if s := rng.IntN(5); s < 3 {
				stream = fmt.Sprint(7 + s)
			}
			ts := int64(rng.IntN(200)) * 1000
			dur := int64(0)
			if rng.IntN(6) > 0 {
				dur = int64(rng.IntN(12)) * 1000
			}
			id := base + int64(i)
			launch, isGraph := "NULL", false
			switch r := rng.IntN(10); {
			case r < 2 && graph != 0: // the graph replay goes on
				launch, isGraph = fmt.Sprint(graph), true
			case r < 3: // a graph replay begins
				graph = base + int64(50000+i)
				launch, isGraph = fmt.Sprint(graph), true
				launches = append(launches, fmt.Sprintf("(%d, %d, 'cudaGraphLaunch', %d, 5, 1, 1, NULL)",
					graph, trace, ts-rng.Int64N(80000)))
			case r < 9: // its own launch, long before or just before the event
				launch = fmt.Sprint(base + int64(10000+i))
				tid := fmt.Sprint(1 + rng.IntN(2))
				if rng.IntN(8) == 0 {
					tid = "NULL"
				}
				launches = append(launches, fmt.Sprintf("(%s, %d, 'cudaLaunchKernel', %d, 3, 1, %s, %d)",
					launch, trace, ts-rng.Int64N(70000), tid, 1+rng.IntN(3)))
			default: // a launch id without a launch row
				launch = fmt.Sprint(base + int64(90000+i))
			}
			kernels = append(kernels, fmt.Sprintf("(%d, %d, %d, %d, '%s', %d, 'kernel', %d, %d, %s, %s, %v, %s, %s, %s)",
				id, trace, run, rank, []string{"decode", "prefill"}[rng.IntN(2)], 1+rng.IntN(2), ts, dur, device, stream,
				isGraph, launch, step, []string{"NULL", "7"}[rng.IntN(2)]))
		}
	}
	exec(`INSERT INTO kernels (kernel_id, trace_id, run_id, rank, stage, name_id, kind, ts_ns, dur_ns, device, stream,
		graph_launch, launch_id, step, site_id) VALUES ` + strings.Join(kernels, ",\n"))
	exec(`INSERT INTO launches (launch_id, trace_id, name, ts_ns, dur_ns, pid, tid, site_id) VALUES ` + strings.Join(launches, ",\n"))

	dump := func(q string) string { return schematest.Dump(t, db, q+` ORDER BY ALL`) }
	// The longest gaps are kept from many: some trace, rank and stage has
	// more than four times idleWorstGaps device gaps outside the edges.
	var most int
	if err := db.QueryRow(`SELECT max(n) FROM (SELECT count(*) AS n FROM _idle_gaps_for(NULL, runs := [1, 2]) g
			JOIN steps s USING (trace_id, step) WHERE g.scope = 'device' AND NOT s.edge GROUP BY g.run_id, g.trace_id, g.rank, g.stage)`).Scan(&most); err != nil {
		t.Fatal(err)
	}
	if most <= 4*idleWorstGaps {
		t.Errorf("fixture: at most %d device gaps of a trace, rank and stage", most)
	}
	brute := bruteIdle(t, db)
	// The references (the macros over the events, which no save changes)
	// are computed once per run list, not once per case.
	refs := map[string]string{}
	ref := func(q string) string {
		if _, ok := refs[q]; !ok {
			refs[q] = dump(q)
		}
		return refs[q]
	}
	check := func(what string, runs ...int64) {
		t.Helper()
		list := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(runs)), ", "), "[]")
		in := ` WHERE list_contains([` + list + `], run_id)`
		_, known := refs[`SELECT * FROM _idle_steps_for(NULL, runs := [`+list+`])`]
		want := ref(`SELECT * FROM _idle_steps_for(NULL, runs := [` + list + `])`)
		if got := dump(`SELECT * FROM idle_step_store` + in); got != want || want == "" {
			t.Errorf("%s: saved idle rows per step differ from _idle_steps_for:\n%s", what, firstDiff(got, want))
		}
		want = ref(`SELECT * FROM _idle_worst_gaps_for(NULL, runs := [` + list + `])`)
		if got := dump(`SELECT * FROM idle_gap_store` + in); got != want || want == "" {
			t.Errorf("%s: saved longest gaps differ from _idle_worst_gaps_for:\n%s", what, firstDiff(got, want))
		}
		for _, table := range []string{"steps", "gaps"} {
			var q string
			if table == "steps" {
				q = `SELECT run_id, trace_id, rank, stage, step, coalesce(device, -1), scope, coalesce(stream, -1),
					events, window_ns, busy_ns, gaps, host_bound_ns, launch_latency_ns, sync_ns, graph_internal_ns, other_ns
					FROM idle_step_store` + in
			} else {
				q = `SELECT run_id, trace_id, rank, stage, step, coalesce(device, -1), kernel_id, prev_kernel_id, gap_ns, cause
					FROM idle_gap_store` + in
			}
			got := strings.Split(strings.TrimSuffix(dump(q), "\n"), "\n")
			var want []string
			for _, line := range brute[table] {
				if slices.ContainsFunc(runs, func(r int64) bool { return strings.HasPrefix(line, fmt.Sprint(r)+" ") }) {
					want = append(want, line)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
				t.Errorf("%s: saved idle %s differ from the brute force:\n%s", what, table, firstDiff(g, w))
			}
		}
		if len(runs) == 1 || known {
			return // the fixture's causes checked already
		}
		var causes string
		if err := db.QueryRow(`SELECT string_agg(DISTINCT cause, ',' ORDER BY cause) FROM _idle_gaps_for(NULL, runs := [` + list + `])`).Scan(&causes); err != nil {
			t.Fatal(err)
		}
		if causes != "graph_internal,host_bound,launch_latency,other,sync" {
			t.Errorf("%s: fixture: the gaps' causes are %s, not all five", what, causes)
		}
	}
	save := func(runs []int64, chunk, limit int64) {
		t.Helper()
		fail := func(step string, err error) error { return fmt.Errorf("%s%w", step, err) }
		err := inConnTx(ctx, db, fail, func(conn *sql.Conn) error {
			for _, name := range []string{"idle_store_clear_steps", "idle_store_clear_gaps"} {
				if _, err := conn.ExecContext(ctx, stmt(name), runArgs(runs)...); err != nil {
					return err
				}
			}
			return sweepIdleBy(ctx, conn, runs, chunk, limit)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// the last: a step over the limit, so the SQL saves the runs
	for _, c := range []struct{ chunk, limit int64 }{{150, sweepGroupLimit},
		{idleChunkKernels, sweepGroupLimit}, {idleChunkKernels, 20}} {
		for run := int64(1); run <= 2; run++ {
			save([]int64{run}, c.chunk, c.limit)
			check(fmt.Sprintf("chunk %d, limit %d, run %d", c.chunk, c.limit, run), run)
		}
		save([]int64{1, 2}, c.chunk, c.limit)
		check(fmt.Sprintf("chunk %d, limit %d, runs 1 and 2", c.chunk, c.limit), 1, 2)
	}
}

// bruteIdle is the idle rows as the test dumps them ("steps": per step,
// device and scope; "gaps": the longest gaps), found pairwise from the
// definitions of sqllib/idle.sql: in each group (trace, rank, stage, step,
// device, and the stream in scope 'stream') an event's prev is the one
// among those before it (by start, then id) with the latest end (ties: the
// higher id), and a gap when that end is before its start; its cause the
// first of: both replayed by one graph launch; launched after the gap began
// and some blocking call on the launching thread began at or before the
// launch and ended after the gap began; launched after the gap began;
// launched and the gap under 30 us; other. A step's busy time is the
// length of the union of its events' intervals, merged here.
func bruteIdle(t *testing.T, db *sql.DB) map[string][]string {
	t.Helper()
	type event struct {
		run, trace, rank, step, device, stream, id, ts, end int64
		stage                                               string
		graph, edge                                         bool
		launch, launchTS, pid, tid                          sql.NullInt64
	}
	type call struct{ trace, pid, tid, ts, end int64 }
	var events []event
	rows, err := db.Query(`SELECT k.run_id, k.trace_id, k.rank, k.step, coalesce(k.device, -1), coalesce(k.stream, -1),
			k.kernel_id, k.ts_ns, k.ts_ns + k.dur_ns, k.stage, k.graph_launch, coalesce(s.edge, true),
			k.launch_id, l.ts_ns, l.pid, l.tid
		FROM kernels k LEFT JOIN launches l USING (launch_id) LEFT JOIN steps s ON s.trace_id = k.trace_id AND s.step = k.step
		WHERE k.step IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var e event
		if err := rows.Scan(&e.run, &e.trace, &e.rank, &e.step, &e.device, &e.stream, &e.id, &e.ts, &e.end, &e.stage,
			&e.graph, &e.edge, &e.launch, &e.launchTS, &e.pid, &e.tid); err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	rows.Close()
	var calls []call
	rows, err = db.Query(`SELECT trace_id, pid, tid, ts_ns, ts_ns + dur_ns FROM launches
		WHERE name IN ('cudaStreamSynchronize', 'cudaMemcpy')`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c call
		if err := rows.Scan(&c.trace, &c.pid, &c.tid, &c.ts, &c.end); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
	}
	rows.Close()
	type key struct {
		run, trace, rank, step, device int64
		stage, scope                   string
		stream                         int64
	}
	groups := map[key][]event{}
	for _, e := range events {
		d := key{e.run, e.trace, e.rank, e.step, e.device, e.stage, "device", -1}
		s := d
		s.scope, s.stream = "stream", e.stream
		groups[d] = append(groups[d], e)
		groups[s] = append(groups[s], e)
	}
	type gap struct {
		next, prev event
		ns         int64
		cause      string
	}
	out := map[string][]string{}
	worst := map[[3]string][]gap{}
	for k, es := range groups {
		slices.SortFunc(es, func(a, b event) int { return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.id, b.id)) })
		byCause := map[string]int64{}
		var gaps int64
		for i, next := range es {
			if i == 0 {
				continue
			}
			prev := es[0]
			for _, e := range es[1:i] {
				if e.end > prev.end || e.end == prev.end && e.id > prev.id {
					prev = e
				}
			}
			if prev.end >= next.ts {
				continue
			}
			g := gap{next: next, prev: prev, ns: next.ts - prev.end}
			blocked := false
			for _, c := range calls {
				if next.launchTS.Valid && next.pid.Valid && next.tid.Valid && c.trace == next.trace &&
					c.pid == next.pid.Int64 && c.tid == next.tid.Int64 && c.ts <= next.launchTS.Int64 && c.end > prev.end {
					blocked = true
				}
			}
			late := next.launchTS.Valid && next.launchTS.Int64 > prev.end
			switch {
			case next.graph && prev.graph && next.launch.Valid && next.launch == prev.launch:
				g.cause = "graph_internal"
			case late && blocked:
				g.cause = "sync"
			case late:
				g.cause = "host_bound"
			case next.launchTS.Valid && g.ns < 30000:
				g.cause = "launch_latency"
			default:
				g.cause = "other"
			}
			gaps++
			byCause[g.cause] += g.ns
			if k.scope == "device" && !next.edge {
				w := [3]string{fmt.Sprint(k.run, k.trace), fmt.Sprint(k.rank), k.stage}
				worst[w] = append(worst[w], g)
			}
		}
		// busy: the union of the intervals, merged in start order
		first, last := es[0].ts, es[0].end
		var busy int64
		curFrom, curTo := es[0].ts, es[0].end
		for _, e := range es[1:] {
			last = max(last, e.end)
			if e.ts > curTo {
				busy += curTo - curFrom
				curFrom, curTo = e.ts, e.end
			} else {
				curTo = max(curTo, e.end)
			}
		}
		busy += curTo - curFrom
		out["steps"] = append(out["steps"], fmt.Sprintf("%d %d %d %s %d %d %s %d %d %d %d %d %d %d %d %d %d",
			k.run, k.trace, k.rank, k.stage, k.step, k.device, k.scope, k.stream, len(es), last-first, busy, gaps,
			byCause["host_bound"], byCause["launch_latency"], byCause["sync"], byCause["graph_internal"], byCause["other"]))
	}
	for _, gs := range worst {
		slices.SortFunc(gs, func(a, b gap) int { return cmp.Or(cmp.Compare(b.ns, a.ns), cmp.Compare(a.next.id, b.next.id)) })
		for _, g := range gs[:min(len(gs), 10)] {
			n := g.next
			out["gaps"] = append(out["gaps"], fmt.Sprintf("%d %d %d %s %d %d %d %d %d %s",
				n.run, n.trace, n.rank, n.stage, n.step, n.device, n.id, g.prev.id, g.ns, g.cause))
		}
	}
	return out
}
