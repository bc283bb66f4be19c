package ingest

import (
	"cmp"
	"container/heap"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/tracehouse/tracehouse/inline"
	"github.com/tracehouse/tracehouse/schema"
)

// linkRecs are compact copies of what link_kernels.sql and link_steps.sql
// read of a trace (its kernels, launches, CPU ops and stage annotations),
// kept while the trace is appended so that its kernels are linked here, in
// Go, and updated once from a typed table function (link_kernels_from.sql).
// In DuckDB the two statements cost 0.2-0.25 s per 270 MB trace inside its
// transaction, mostly finding rows among the uncommitted ones. The SQL
// stays the definition: it links Nsight exports and traces past linkCap,
// and TestLinkInGoMatchesSQL holds the two to the same rows.
type linkRecs struct {
	kernels  []linkKernel
	launches []linkLaunch
	ops      []linkOp
	gpuWins  []stageWindow // gpu_user_annotation naming a stage; group = {pid (the device), 0}
	cpuWins  []stageWindow // user_annotation naming a stage; group = {pid, tid}
	// over is set once the trace has more than linkCap records: the
	// copies are dropped and the SQL links the trace.
	over bool
}

// linkCap bounds the records a trace's linking keeps in Go (24-56 bytes
// each): a 270 MB trace holds about 0.3 M, one of 900 MB the cap.
const linkCap = 1 << 20

type linkKernel struct {
	ts, stream, correlation, extern int64
	device                          int64 // as stored (an INTEGER); null: NULL
	ordinal                         uint32
}

type linkLaunch struct {
	ts, correlation, extern, pid, tid int64
	ordinal                           uint32
	site                              int32 // noSite: none
	graph                             bool
}

type linkOp struct {
	ts, extern int64
	ordinal    uint32
	site       int32 // noSite: none
}

const noSite = -1

// stageWindow is an annotation [ts, end) naming a stage, on a device or a
// thread (group).
type stageWindow struct {
	group   [2]int64 // {the device, 0} or {pid, tid}
	ts, end int64
	stage   string
}

// hold copies what linking reads from one decoded batch.
func (r *linkRecs) hold(b *decoded) {
	if r.over {
		return
	}
	for i := range b.kernels {
		k := &b.kernels[i]
		dev := k.device
		if dev != null {
			dev = int64(int32(dev)) // kernels.device is an INTEGER
		}
		r.kernels = append(r.kernels, linkKernel{ordinal: uint32(k.ordinal), ts: k.ts, device: dev, stream: k.stream,
			correlation: k.correlation, extern: k.externalID})
	}
	for i := range b.launches {
		x := &b.launches[i]
		r.launches = append(r.launches, linkLaunch{ordinal: uint32(x.ordinal), ts: x.ts, pid: x.pid, tid: x.tid,
			correlation: x.correlation, extern: x.externalID, site: noSite, graph: x.graph})
	}
	for i := range b.ops {
		x := &b.ops[i]
		r.ops = append(r.ops, linkOp{ordinal: uint32(x.ordinal), ts: x.ts, extern: x.externalID, site: noSite})
	}
	for i := range b.annotations {
		x := &b.annotations[i]
		if x.stage == "" || x.pid == null {
			continue
		}
		w := stageWindow{group: [2]int64{x.pid, 0}, ts: x.ts, end: x.ts + x.dur, stage: x.stage}
		switch x.cat {
		case "gpu_user_annotation":
			r.gpuWins = append(r.gpuWins, w)
		case "user_annotation":
			if x.tid != null {
				w.group[1] = x.tid
				r.cpuWins = append(r.cpuWins, w)
			}
		}
	}
	if len(r.kernels)+len(r.launches)+len(r.ops) > linkCap {
		*r = linkRecs{over: true}
	}
}

// site records the sweep's Python site of a launch (kind derivedLaunchSite)
// or op; the records are in ordinal order (stream order).
func (r *linkRecs) site(kind int8, ordinal int64, value int32) {
	if r.over {
		return
	}
	switch kind {
	case derivedLaunchSite:
		if i, ok := slices.BinarySearchFunc(r.launches, uint32(ordinal), func(l linkLaunch, o uint32) int { return cmp.Compare(l.ordinal, o) }); ok {
			r.launches[i].site = value
		}
	case derivedOpSite:
		if i, ok := slices.BinarySearchFunc(r.ops, uint32(ordinal), func(o linkOp, x uint32) int { return cmp.Compare(o.ordinal, x) }); ok {
			r.ops[i].site = value
		}
	}
}

// stepWindow is a row of `steps` as link_steps.sql reads it.
type stepWindow struct {
	ts, end int64
	step    int32
}

// linked is one kernel's row for link_kernels_from.sql; null stands for
// NULL.
type linked struct {
	kernelID, launchID, opID, site, streamPos, ts, step int64
	graph                                               bool
	stage                                               string // "": keep the kernel's
}

// link computes link_kernels.sql and link_steps.sql for every held
// kernel, in kernel_id order. key is the trace's id << 32; base moves
// times to absolute; stageKnown skips the stage windows; the steps are the
// trace's rows of `steps` (absolute times), window true when its one step
// is the whole trace.
func (r *linkRecs) link(key, base int64, stageKnown bool, gpuSteps, cpuSteps []stepWindow, window bool) []linked {
	out := make([]linked, len(r.kernels))
	// Launches by correlation and ops by external id, each key's rows
	// chained (usually one): the pick is the latest at or before the
	// kernel, else the latest; ties go to the later in the file.
	launches := chain(len(r.launches), func(i int) int64 { return r.launches[i].correlation })
	ops := chain(len(r.ops), func(i int) int64 { return r.ops[i].extern })
	launchOf := make([]int32, len(r.kernels))
	for i := range r.kernels {
		k := &r.kernels[i]
		o := &out[i]
		*o = linked{kernelID: key + int64(k.ordinal), launchID: null, opID: null, site: null, ts: k.ts + base, step: null}
		launchOf[i] = -1
		ext := k.extern
		var l *linkLaunch
		if k.correlation != null {
			if li := launches.pick(k.correlation, k.ts, func(j int32) (int64, uint32) { return r.launches[j].ts, r.launches[j].ordinal }); li >= 0 {
				l = &r.launches[li]
				launchOf[i] = li
				o.launchID, o.graph = key+int64(l.ordinal), l.graph
				if ext == null {
					ext = l.extern
				}
			}
		}
		var op *linkOp
		if ext != null {
			if oi := ops.pick(ext, k.ts, func(j int32) (int64, uint32) { return r.ops[j].ts, r.ops[j].ordinal }); oi >= 0 {
				op = &r.ops[oi]
				o.opID = key + int64(op.ordinal)
			}
		}
		switch {
		case l != nil && l.graph:
		case l != nil && l.site != noSite:
			o.site = int64(l.site)
		case op != nil && op.site != noSite:
			o.site = int64(op.site)
		}
	}
	r.streamPositions(out)
	if !stageKnown {
		r.stages(out, launchOf)
	}
	for i := range out {
		o := &out[i]
		if window {
			o.step = 0
			continue
		}
		if s, ok := stepAt(gpuSteps, o.ts); ok {
			o.step = s
		} else if li := launchOf[i]; li >= 0 {
			if s, ok := stepAt(cpuSteps, r.launches[li].ts+base); ok {
				o.step = s
			}
		}
	}
	return out
}

// chained indexes rows by a key (NULL keys left out): the key's first row,
// then next[row] its following one, -1 ending a chain. Correlation and
// external ids are mostly dense counters, so the first rows sit in an
// array indexed by key - lo when the keys span little more than the rows;
// otherwise in a map.
type chained struct {
	lo    int64
	dense []int32 // key - lo -> first row, -1: none
	first map[int64]int32
	next  []int32
}

func chain(n int, key func(int) int64) chained {
	c := chained{next: make([]int32, n)}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range n {
		if k := key(i); k != null {
			lo, hi = min(lo, k), max(hi, k)
		}
	}
	if lo <= hi && uint64(hi-lo) < uint64(4*n+1024) {
		c.lo, c.dense = lo, make([]int32, hi-lo+1)
		for i := range c.dense {
			c.dense[i] = -1
		}
	} else {
		c.first = make(map[int64]int32, n)
	}
	// backwards, so that each key's rows chain in row order
	for i := n - 1; i >= 0; i-- {
		c.next[i] = -1
		k := key(i)
		if k == null {
			continue
		}
		if c.dense != nil {
			c.next[i], c.dense[k-lo] = c.dense[k-lo], int32(i)
			continue
		}
		if j, ok := c.first[k]; ok {
			c.next[i] = j
		}
		c.first[k] = int32(i)
	}
	return c
}

// head is the first row of key k, -1 for none.
func (c chained) head(k int64) int32 {
	if c.dense != nil {
		// unsigned: k - lo may overflow an int64
		if d := uint64(k) - uint64(c.lo); k >= c.lo && d < uint64(len(c.dense)) {
			return c.dense[d]
		}
		return -1
	}
	if j, ok := c.first[k]; ok {
		return j
	}
	return -1
}

// pick returns, among the rows of key k, the latest (by time, then
// ordinal) at or before ts, else the latest; -1 when k has none.
func (c chained) pick(k, ts int64, at func(int32) (int64, uint32)) int32 {
	best, bestIn := int32(-1), false
	var bts int64
	var bord uint32
	for j := c.head(k); j >= 0; j = c.next[j] {
		jts, jord := at(j)
		in := jts <= ts
		if best < 0 || in && !bestIn || in == bestIn && (jts > bts || jts == bts && jord > bord) {
			best, bestIn, bts, bord = j, in, jts, jord
		}
	}
	return best
}

// streamPositions numbers each kernel's place on its (device, stream) by
// (ts, kernel_id), from 1; a NULL device or stream is a group of its own,
// as in SQL's PARTITION BY. A stream's kernels usually come in time order
// already.
func (r *linkRecs) streamPositions(out []linked) {
	type stream struct{ device, stream int64 }
	groups := map[stream][]int32{}
	for i := range r.kernels {
		k := &r.kernels[i]
		key := stream{k.device, k.stream}
		groups[key] = append(groups[key], int32(i))
	}
	byTime := func(a, b int32) int {
		x, y := &r.kernels[a], &r.kernels[b]
		return cmp.Or(cmp.Compare(x.ts, y.ts), cmp.Compare(x.ordinal, y.ordinal))
	}
	for _, g := range groups {
		if !slices.IsSortedFunc(g, byTime) {
			slices.SortFunc(g, byTime)
		}
		for n, i := range g {
			out[i].streamPos = int64(n + 1)
		}
	}
}

// stages sets each kernel's stage from the innermost (latest start, then
// earliest end, then least stage) GPU annotation window on its device
// containing its start, else the CPU annotation window on its launch's
// thread containing the launch's start.
func (r *linkRecs) stages(out []linked, launchOf []int32) {
	var gq, cq []stageQuery
	for i := range r.kernels {
		if k := &r.kernels[i]; k.device != null {
			gq = append(gq, stageQuery{group: [2]int64{k.device, 0}, t: k.ts, kernel: int32(i)})
		}
		if li := launchOf[i]; li >= 0 {
			if l := &r.launches[li]; l.pid != null && l.tid != null {
				cq = append(cq, stageQuery{group: [2]int64{l.pid, l.tid}, t: l.ts, kernel: int32(i)})
			}
		}
	}
	gpu := innermost(gq, r.gpuWins, len(r.kernels))
	cpu := innermost(cq, r.cpuWins, len(r.kernels))
	for i := range out {
		if gpu[i] != "" {
			out[i].stage = gpu[i]
		} else if cpu[i] != "" {
			out[i].stage = cpu[i]
		}
	}
}

// stageQuery asks for the stage window of group containing t.
type stageQuery struct {
	group  [2]int64
	t      int64
	kernel int32
}

// innermost answers qs from wins (both sorted here): by kernel, the stage
// of the innermost window containing the query's time, "" for none. One
// sweep in time order per group: windows open as the time passes their
// start and, once ended, stay ended for every later query.
func innermost(qs []stageQuery, wins []stageWindow, kernels int) []string {
	out := make([]string, kernels)
	if len(qs) == 0 || len(wins) == 0 {
		return out
	}
	byGroupTime := func(a, b stageQuery) int { return cmp.Or(compareGroups(a.group, b.group), cmp.Compare(a.t, b.t)) }
	if !slices.IsSortedFunc(qs, byGroupTime) {
		slices.SortFunc(qs, byGroupTime)
	}
	wins = slices.Clone(wins)
	slices.SortFunc(wins, func(a, b stageWindow) int { return cmp.Or(compareGroups(a.group, b.group), cmp.Compare(a.ts, b.ts)) })
	var open windowHeap
	w := 0
	for n, q := range qs {
		if n == 0 || qs[n-1].group != q.group {
			open = open[:0]
			for w < len(wins) && compareGroups(wins[w].group, q.group) < 0 {
				w++
			}
		}
		for w < len(wins) && wins[w].group == q.group && wins[w].ts <= q.t {
			heap.Push(&open, wins[w])
			w++
		}
		for len(open) > 0 && open[0].end <= q.t {
			heap.Pop(&open)
		}
		if len(open) > 0 {
			out[q.kernel] = open[0].stage
		}
	}
	return out
}

func compareGroups(a, b [2]int64) int {
	return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
}

// windowHeap orders open windows innermost first: latest start, then
// earliest end, then least stage.
type windowHeap []stageWindow

func (h windowHeap) Len() int { return len(h) }
func (h windowHeap) Less(i, j int) bool {
	a, b := &h[i], &h[j]
	if a.ts != b.ts {
		return a.ts > b.ts
	}
	if a.end != b.end {
		return a.end < b.end
	}
	return a.stage < b.stage
}
func (h windowHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *windowHeap) Push(x any)   { *h = append(*h, x.(stageWindow)) }
func (h *windowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// stepAt is the step of the window (sorted by start, then step; windows
// of one kind do not overlap) containing t: the last starting at or
// before t, if t is before its end.
func stepAt(wins []stepWindow, t int64) (int64, bool) {
	n, _ := slices.BinarySearchFunc(wins, t+1, func(w stepWindow, t int64) int {
		if w.ts < t {
			return -1
		}
		return 1
	})
	if n == 0 || t >= wins[n-1].end {
		return 0, false
	}
	return int64(wins[n-1].step), true
}

// readSteps reads trace's step windows as link_steps.sql does: GPU and
// CPU windows sorted by (start, step), and whether its one step is the
// whole trace.
func readSteps(ctx context.Context, conn *sql.Conn, trace int64) (gpu, cpu []stepWindow, window bool, err error) {
	rows, err := conn.QueryContext(ctx, `SELECT step, source, gpu_ts_ns, gpu_end_ns, cpu_ts_ns, cpu_end_ns FROM steps WHERE trace_id = $1`, trace)
	if err != nil {
		return nil, nil, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var step int32
		var source string
		var gts, gend, cts, cend sql.NullInt64
		if err := rows.Scan(&step, &source, &gts, &gend, &cts, &cend); err != nil {
			return nil, nil, false, err
		}
		window = window || source == "window"
		if gts.Valid {
			gpu = append(gpu, stepWindow{ts: gts.Int64, end: gend.Int64, step: step})
		}
		if cts.Valid {
			cpu = append(cpu, stepWindow{ts: cts.Int64, end: cend.Int64, step: step})
		}
	}
	byStart := func(a, b stepWindow) int { return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.step, b.step)) }
	slices.SortFunc(gpu, byStart)
	slices.SortFunc(cpu, byStart)
	return gpu, cpu, window, rows.Err()
}

// linkColumns are linked's columns; site_id and step are BIGINT here (the
// UPDATE casts them to the kernels' INTEGER).
var linkColumns = columns([]string{"kernel_id", "launch_id", "op_id", "site_id", "graph", "stage", "stream_pos", "ts_ns", "step"},
	duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT,
	duckdb.TYPE_BOOLEAN, duckdb.TYPE_VARCHAR, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT)

// linkSource is linked rows as rows of linkColumns.
type linkSource struct {
	rows []linked
	pos  int
}

func (s *linkSource) Fill(chunk duckdb.DataChunk) (int, error) {
	n := 0
	for limit := schema.ChunkRows(); n < limit && s.pos < len(s.rows); n++ {
		r := &s.rows[s.pos]
		s.pos++
		err := errors.Join(
			duckdb.SetChunkValue(chunk, 0, n, r.kernelID),
			duckdb.SetChunkValue(chunk, 4, n, r.graph),
			duckdb.SetChunkValue(chunk, 6, n, r.streamPos),
			duckdb.SetChunkValue(chunk, 7, n, r.ts))
		// nullable values inline, as frameSource sets them (a helper
		// taking the chunk cost an allocation per value)
		for _, c := range [...]struct {
			col int
			v   int64
		}{{1, r.launchID}, {2, r.opID}, {3, r.site}, {8, r.step}} {
			if c.v == null {
				err = errors.Join(err, chunk.SetValue(c.col, n, nil))
			} else {
				err = errors.Join(err, duckdb.SetChunkValue(chunk, c.col, n, c.v))
			}
		}
		if r.stage == "" {
			err = errors.Join(err, chunk.SetValue(5, n, nil))
		} else {
			err = errors.Join(err, duckdb.SetChunkValue(chunk, 5, n, r.stage))
		}
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// linkInGo links the trace's kernels from t.link and sets the results on
// them (link_kernels_from.sql); the caller has stored the launch and op
// sites, moved the times and found the steps.
func (l *loader) linkInGo(ctx context.Context, conn *sql.Conn, path string, t *traceState, base int64, rank int, merged, stageKnown bool) error {
	gpu, cpu, window, err := readSteps(ctx, conn, t.id)
	if err != nil {
		return &dbError{fmt.Errorf("%s: read the steps: %w", path, err)}
	}
	rows := t.link.link(t.key, base, stageKnown, gpu, cpu, window)
	t.link = linkRecs{}
	if len(rows) == 0 {
		return nil
	}
	q, args := inline.Args(stmt("link_kernels_from"), []any{sql.Named("trace", t.id), sql.Named("rank", rank), sql.Named("merged", merged)})
	if err := l.env.rows.ExecRows(ctx, conn, q, linkColumns, &linkSource{rows: rows}, args...); err != nil {
		return &dbError{fmt.Errorf("%s: link_kernels_from: %w", path, err)}
	}
	return nil
}
