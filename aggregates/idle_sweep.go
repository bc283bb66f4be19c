package aggregates

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"

	"github.com/tracehouse/tracehouse/inline"
	"github.com/tracehouse/tracehouse/schema"
)

// The idle rows (sqllib/idle.sql: _idle_steps_for, _idle_worst_gaps_for)
// are computed here, in Go, when a step save saves them: the SQL macro
// _idle_gaps_for sorts every event of a run twice over (one copy per
// scope) and runs three windows and an ASOF join over the result, which
// made the idle rows the largest part of a finish (270 MB SGLang trace:
// 0.8 CPU-s of about 2.3 for the step save; dense 250 MB: 3.4 + 1.9 CPU-s
// of 15, bench/README.md). The macros stay the one definition, which every
// reader without a current saved copy and a lake use;
// TestSweepIdleMatchesSQL holds the two to the same rows.

// idleLaunchGapNS is the launch gap the saved idle rows are computed with
// (sqllib/idle.sql: _idle_default_gap()).
const idleLaunchGapNS = 30000

// idleWorstGaps is how many of the longest device gaps of each trace, rank
// and stage idle_gap_store keeps (_idle_worst_gaps_for's n).
const idleWorstGaps = 10

// idleGroup is one device group (_idle_gaps_for's trace, rank, stage,
// step and device) as idle_sweep_groups.sql reads it: its key, its GPU
// events, and whether its step is one whose gaps may be among the longest
// (a step row, not an edge).
type idleGroup struct {
	run, trace, rank, step int64
	stage                  string
	device                 sql.NullInt64
	kernels                int64
	worst                  bool
}

// idleKernel is one GPU event as idle_sweep_kernels.sql reads it. Its
// group's key is read once per group (idle_sweep_groups.sql): reading it
// with every event through the driver cost more than the sweep.
type idleKernel struct {
	stream                sql.NullInt64
	id, ts, end           int64
	graph                 bool
	launch, launchTS, pid sql.NullInt64
	tid                   sql.NullInt64
	nameID                int64
	site                  sql.NullInt64
}

// idleStepRow is one row of idle_step_store.
type idleStepRow struct {
	run, trace, rank, step int64
	stage                  string
	device                 sql.NullInt64
	scope                  string
	stream                 sql.NullInt64
	events, first, lastEnd int64
	idle, gaps             int64
	byCause                [idleCauses]int64
}

// The causes of a gap, in the order of _idle_gaps_for's CASE, and their
// names.
const (
	causeGraphInternal = iota
	causeSync
	causeHostBound
	causeLaunchLatency
	causeOther
	idleCauses
)

var causeNames = [idleCauses]string{"graph_internal", "sync", "host_bound", "launch_latency", "other"}

// idleGap is one device gap that may be among the longest of its trace,
// rank and stage (a row of idle_gap_store).
type idleGap struct {
	g                  idleGroup  // next's
	next               idleKernel // a copy: the range read is dropped after its sweep
	prevID, prevNameID int64
	start, ns          int64
	cause              int
}

// idleCall is a blocking runtime call on one thread: its start and end.
type idleCall struct{ ts, end int64 }

// idleThread names a thread of a trace.
type idleThread struct{ trace, pid, tid int64 }

// idleSweep holds what the sweep of a batch of runs has found so far.
type idleSweep struct {
	steps []idleStepRow
	// worst holds the candidates of each (trace, rank, stage) for its
	// longest gaps, pruned to idleWorstGaps now and then
	worst    map[idleWorstKey][]idleGap
	blocking map[idleThread][]idleCall
	// the traces blocking holds the calls of (read once for the ranges of
	// one large trace: the calls are found by a regular expression over
	// every launch of the traces)
	blockingFrom, blockingTo int64
	swept                    int64 // events swept
}

type idleWorstKey struct {
	trace, rank int64
	stage       string
}

// saveIdle saves the idle rows of runs, per step (idle_step_store) and the
// longest gaps (idle_gap_store), inside the step save's transaction on
// conn: swept in Go (sweepIdleBy), unless a step of one trace holds more
// events than sweepGroupLimit, when the SQL library computes them
// (saveIdleSQL), which spills, so that memory stays bounded.
func saveIdle(ctx context.Context, conn *sql.Conn, runs []int64) error {
	return sweepIdleBy(ctx, conn, runs, idleChunkKernels, sweepGroupLimit)
}

// idleChunkKernels bounds the GPU events one read of saveIdle holds (about
// 200 bytes each in Go, so about 25 MiB); a larger step is read alone.
const idleChunkKernels = 1 << 17

// idleStep is a (trace, step) pair and its GPU events.
type idleStep struct{ trace, step, kernels int64 }

// sweepIdleBy is saveIdle reading ranges of at most chunk events (a larger
// step alone), leaving runs with a step over limit events to the SQL.
func sweepIdleBy(ctx context.Context, conn *sql.Conn, runs []int64, chunk, limit int64) error {
	args := runArgs(runs)
	var steps []idleStep
	rows, err := inline.Query(ctx, conn, stmt("idle_sweep_steps"), args...)
	if err != nil {
		return fmt.Errorf("idle_sweep_steps: %w", err)
	}
	for rows.Next() {
		var s idleStep
		if err := rows.Scan(&s.trace, &s.step, &s.kernels); err != nil {
			rows.Close()
			return fmt.Errorf("idle_sweep_steps: %w", err)
		}
		steps = append(steps, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("idle_sweep_steps: %w", err)
	}
	for _, s := range steps {
		if s.kernels > limit {
			return saveIdleSQL(ctx, conn, runs)
		}
	}
	sw := &idleSweep{worst: map[idleWorstKey][]idleGap{}}
	for lo := 0; lo < len(steps); {
		hi := lo + 1
		size := steps[lo].kernels
		for hi < len(steps) && size+steps[hi].kernels <= chunk {
			size += steps[hi].kernels
			hi++
		}
		if err := sw.sweepRange(ctx, conn, args, steps[lo], steps[hi-1], size); err != nil {
			return err
		}
		lo = hi
	}
	if err := sw.store(conn); err != nil {
		return err
	}
	if sw.swept >= freeAfterKernels {
		// as sweepOverlapBy: the events read are garbage now, and the
		// statements after would stack DuckDB's memory on them
		debug.FreeOSMemory()
	}
	return nil
}

// sweepRange reads the events of the (trace, step) pairs from lo to hi
// (n of them) and sweeps each device group.
func (sw *idleSweep) sweepRange(ctx context.Context, conn *sql.Conn, args []any, lo, hi idleStep, n int64) error {
	bounds := []any{sql.Named("lo_trace", lo.trace), sql.Named("hi_trace", hi.trace)}
	if err := sw.readBlocking(ctx, conn, lo.trace, hi.trace); err != nil {
		return fmt.Errorf("idle_sweep_blocking: %w", err)
	}
	rangeArgs := append(append(bounds, sql.Named("lo_step", lo.step), sql.Named("hi_step", hi.step)), args...)
	groups, err := readIdleGroups(ctx, conn, rangeArgs)
	if err != nil {
		return fmt.Errorf("idle_sweep_groups: %w", err)
	}
	ks, err := readIdleKernels(ctx, conn, rangeArgs, n)
	if err != nil {
		return fmt.Errorf("idle_sweep_kernels: %w", err)
	}
	for i := range groups {
		g := &groups[i]
		if g.kernels > int64(len(ks)) || g.kernels < 1 {
			// counted in the same transaction: never expected
			return fmt.Errorf("idle_sweep_groups: a group of %d GPU events, %d left to sweep", g.kernels, len(ks))
		}
		sw.sweepGroup(g, ks[:g.kernels])
		sw.swept += g.kernels
		ks = ks[g.kernels:]
	}
	if len(ks) > 0 {
		return fmt.Errorf("idle_sweep_groups: %d GPU events in no group", len(ks))
	}
	return nil
}

// readIdleGroups reads the device groups idle_sweep_groups.sql gives for
// args, in idle_sweep_kernels.sql's order.
func readIdleGroups(ctx context.Context, conn *sql.Conn, args []any) ([]idleGroup, error) {
	rows, err := inline.Query(ctx, conn, stmt("idle_sweep_groups"), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []idleGroup
	for rows.Next() {
		var g idleGroup
		if err := rows.Scan(&g.run, &g.trace, &g.rank, &g.stage, &g.step, &g.device, &g.kernels, &g.worst); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// readBlocking reads the blocking calls of the traces from to to, by
// thread and start, unless it holds them (those of other traces are
// dropped).
func (sw *idleSweep) readBlocking(ctx context.Context, conn *sql.Conn, from, to int64) error {
	if sw.blocking != nil && sw.blockingFrom == from && sw.blockingTo == to {
		return nil
	}
	sw.blocking, sw.blockingFrom, sw.blockingTo = map[idleThread][]idleCall{}, from, to
	bounds := []any{sql.Named("lo_trace", from), sql.Named("hi_trace", to)}
	rows, err := inline.Query(ctx, conn, stmt("idle_sweep_blocking"), bounds...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var th idleThread
		var c idleCall
		if err := rows.Scan(&th.trace, &th.pid, &th.tid, &c.ts, &c.end); err != nil {
			return err
		}
		sw.blocking[th] = append(sw.blocking[th], c)
	}
	return rows.Err()
}

// idleRunning is the event with the latest end so far in a group (ties:
// the higher kernel id, as _idle_gaps_for's running max breaks them).
type idleRunning struct {
	k    *idleKernel
	seen bool
}

func (r *idleRunning) add(k *idleKernel) {
	if !r.seen || k.end > r.k.end || k.end == r.k.end && k.id&0xffffffff > r.k.id&0xffffffff {
		r.k, r.seen = k, true
	}
}

// sweepGroup finds the gaps of one device group (its events by start, then
// id), in both scopes: the device's (every event) and each stream's (its
// events), adds a row per scope and stream to sw.steps, and offers the
// device gaps of a step that is not an edge to the longest of its trace,
// rank and stage.
func (sw *idleSweep) sweepGroup(g *idleGroup, ks []idleKernel) {
	first := &ks[0]
	row := func(scope string, stream sql.NullInt64) idleStepRow {
		return idleStepRow{run: g.run, trace: g.trace, rank: g.rank, step: g.step, stage: g.stage,
			device: g.device, scope: scope, stream: stream, first: first.ts}
	}
	dev := row("device", sql.NullInt64{})
	var running idleRunning
	type streamState struct {
		running idleRunning
		row     int // in streams
	}
	byStream := map[sql.NullInt64]*streamState{}
	var streams []idleStepRow
	wk := idleWorstKey{g.trace, g.rank, g.stage}
	for i := range ks {
		k := &ks[i]
		// the device scope
		dev.events++
		if running.seen && running.k.end < k.ts {
			cause := sw.cause(g.trace, k, running.k)
			dev.gaps++
			dev.idle += k.ts - running.k.end
			dev.byCause[cause] += k.ts - running.k.end
			if gs := sw.worst[wk]; g.worst && (len(gs) < idleWorstGaps || k.ts-running.k.end >= gs[idleWorstGaps-1].ns) {
				sw.worst[wk] = pruneWorst(append(gs, idleGap{g: *g, next: *k, prevID: running.k.id,
					prevNameID: running.k.nameID, start: running.k.end, ns: k.ts - running.k.end, cause: cause}))
			}
		}
		if i == 0 || k.end > dev.lastEnd {
			dev.lastEnd = k.end
		}
		running.add(k)
		// the stream scope
		st, ok := byStream[k.stream]
		if !ok {
			st = &streamState{row: len(streams)}
			byStream[k.stream] = st
			r := row("stream", k.stream)
			r.first, r.lastEnd = k.ts, k.end
			streams = append(streams, r)
		}
		sr := &streams[st.row]
		sr.events++
		if st.running.seen && st.running.k.end < k.ts {
			cause := sw.cause(g.trace, k, st.running.k)
			sr.gaps++
			sr.idle += k.ts - st.running.k.end
			sr.byCause[cause] += k.ts - st.running.k.end
		}
		sr.lastEnd = max(sr.lastEnd, k.end)
		st.running.add(k)
	}
	sw.steps = append(sw.steps, dev)
	sw.steps = append(sw.steps, streams...)
}

// cause is the cause of the gap between prev's end and next's start, by
// _idle_gaps_for's CASE: the first that holds of graph_internal (both
// replayed by one graph launch), sync (next launched after the gap began,
// and the last blocking call on its launch's thread that began at or
// before that launch ended after the gap began: the ASOF join's), host
// bound (launched after the gap began), launch latency (launched before,
// a gap shorter than the launch gap), other.
func (sw *idleSweep) cause(trace int64, next, prev *idleKernel) int {
	start := prev.end
	switch {
	case next.graph && prev.graph && next.launch.Valid && prev.launch.Valid && next.launch.Int64 == prev.launch.Int64:
		return causeGraphInternal
	case next.launchTS.Valid && next.launchTS.Int64 > start:
		if next.pid.Valid && next.tid.Valid {
			calls := sw.blocking[idleThread{trace, next.pid.Int64, next.tid.Int64}]
			// the last call with ts <= the launch's start
			i := sort.Search(len(calls), func(i int) bool { return calls[i].ts > next.launchTS.Int64 })
			if i > 0 && calls[i-1].end > start {
				return causeSync
			}
		}
		return causeHostBound
	case next.launchTS.Valid && next.ts-start < idleLaunchGapNS:
		return causeLaunchLatency
	}
	return causeOther
}

// pruneWorst keeps the idleWorstGaps longest of gs (ties: the lower kernel
// id), once it holds more than a few times that. From then on gs is in
// that order up to its idleWorstGaps-th, and a gap shorter than that one
// is not offered (sweepGroup): it could never be kept.
func pruneWorst(gs []idleGap) []idleGap {
	if len(gs) <= 4*idleWorstGaps {
		if len(gs) == idleWorstGaps {
			sortWorst(gs)
		}
		return gs
	}
	sortWorst(gs)
	return slices.Clip(gs[:idleWorstGaps])
}

func sortWorst(gs []idleGap) {
	slices.SortFunc(gs, func(a, b idleGap) int {
		return cmp.Or(cmp.Compare(b.ns, a.ns), cmp.Compare(a.next.id, b.next.id))
	})
}

// store appends the swept rows to idle_step_store and idle_gap_store, in
// the caller's transaction on conn.
func (sw *idleSweep) store(conn *sql.Conn) error {
	var worst []idleGap
	for _, gs := range sw.worst {
		sortWorst(gs)
		worst = append(worst, gs[:min(len(gs), idleWorstGaps)]...)
	}
	if len(sw.steps) == 0 && len(worst) == 0 {
		return nil
	}
	nullInt32 := func(v sql.NullInt64) driver.Value {
		if !v.Valid {
			return nil
		}
		return int32(v.Int64)
	}
	nullInt64 := func(v sql.NullInt64) driver.Value {
		if !v.Valid {
			return nil
		}
		return v.Int64
	}
	return schema.WithAppenders(conn, []schema.Spec{{Table: "idle_step_store"}, {Table: "idle_gap_store"}}, func(apps []*schema.Appender) error {
		for _, r := range sw.steps {
			if err := apps[0].Append(int32(r.run), int32(r.trace), int32(r.rank), r.stage, int32(r.step),
				nullInt32(r.device), r.scope, nullInt64(r.stream), r.events, r.first, r.lastEnd,
				r.lastEnd-r.first, r.lastEnd-r.first-r.idle, r.idle, r.gaps,
				r.byCause[causeHostBound], r.byCause[causeLaunchLatency], r.byCause[causeSync],
				r.byCause[causeGraphInternal], r.byCause[causeOther]); err != nil {
				return err
			}
		}
		for _, g := range worst {
			k, kg := &g.next, &g.g
			if err := apps[1].Append(int32(kg.run), int32(kg.trace), int32(kg.rank), kg.stage, int32(kg.step),
				nullInt32(kg.device), k.id, g.prevID, g.start, g.ns, causeNames[g.cause],
				nullInt64(k.launch), nullInt64(k.launchTS), int32(k.nameID), int32(g.prevNameID),
				nullInt32(k.site)); err != nil {
				return err
			}
		}
		return nil
	})
}

// readIdleKernels reads the events idle_sweep_kernels.sql gives for args,
// n of them, through the driver (eachDriverRow).
func readIdleKernels(ctx context.Context, conn *sql.Conn, args []any, n int64) ([]idleKernel, error) {
	ks := make([]idleKernel, 0, n)
	err := eachDriverRow(ctx, conn, "idle_sweep_kernels", args, 11, func(v []driver.Value) error {
		var k idleKernel
		bad := false
		i64 := func(x driver.Value) int64 {
			n, ok := x.(int64)
			bad = bad || !ok
			return n
		}
		null64 := func(x driver.Value) sql.NullInt64 {
			if x == nil {
				return sql.NullInt64{}
			}
			return sql.NullInt64{Int64: i64(x), Valid: true}
		}
		null32 := func(x driver.Value) sql.NullInt64 {
			if x == nil {
				return sql.NullInt64{}
			}
			n, ok := x.(int32)
			bad = bad || !ok
			return sql.NullInt64{Int64: int64(n), Valid: true}
		}
		var okGraph bool
		k.stream = null64(v[0])
		k.id, k.ts, k.end = i64(v[1]), i64(v[2]), i64(v[3])
		k.graph, okGraph = v[4].(bool)
		k.launch, k.launchTS, k.pid, k.tid = null64(v[5]), null64(v[6]), null64(v[7]), null64(v[8])
		name := null32(v[9])
		k.nameID, k.site = name.Int64, null32(v[10])
		if bad || !okGraph || !name.Valid {
			return fmt.Errorf("unexpected row %v", v)
		}
		ks = append(ks, k)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if int64(len(ks)) != n {
		// the steps were counted in the same transaction: never expected
		return nil, fmt.Errorf("read %d GPU events of steps holding %d", len(ks), n)
	}
	return ks, nil
}
