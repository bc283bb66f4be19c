package aggregates

import (
	"container/heap"
	"context"
	"database/sql"
	"fmt"

	"github.com/tracehouse/tracehouse/inline"
)

// groupSweep computes kernel_overlap_for's figures (sqllib/overlap.sql)
// and _comm_parts_for's (sqllib/comm.sql) for the events of one group,
// which come in start, then id order, whole (sweepRange) or a piece at a
// time (sweepStreamed, for a group too large to hold). start carries the
// number of starts seen before this group (kernel_overlap_for numbers
// start ranks across every group of its call) and is advanced past it.
//
// It is the SQL's sweep written as one pass over the group's instants:
// between two consecutive instants the number of active streams and of
// streams running compute is constant, so the integrals of ">= 2 streams
// active", ">= 1" and ">= 2 streams running compute" advance by the gap
// times an indicator. A kernel's hidden time is the first integral at its
// end minus at its start; its hidden-by-compute time sums, over the gaps
// between its stream's instants, the ">= 2 compute" integral where its
// stream runs compute itself, else the ">= 1" one. At one instant starts
// come before ends, each by kernel id, and the gap to the next instant
// belongs to the last of them (union_share_ns), exactly as the SQL orders
// its points. The running events wait in a heap by end, and a row is
// handed on (done) once complete, so that the sweep holds the running
// events and one pending row per stream, not the group (and a heap of the
// few running events is cheaper than sorting every end: bench/README.md
// forty-eighth figures). TestSweepOverlapMatchesSQL holds it to the macros.
type groupSweep struct {
	starts         *int64
	streams        map[int64]int32
	st             []streamState
	rows           []sweepRow // the events whose rows are not complete yet, and free slots
	free           []int32    // the free slots of rows
	running        []endAt    // a heap by end, then id
	nActive, nComp int        // streams active / running compute
	multi, c1, c2  int64      // the integrals up to the last instant
	prevT          int64      // the last instant
	started        bool
	lastPoint      int32 // the row whose point came last, -1 if none
	done           []sweptKernel
	comm           commAcc
}

// sweepRow is one event of a group being swept, kept until its row is
// complete: it has ended, the next event of its stream has started (or the
// group ended), and it is not the last point seen (which takes the gap to
// the next instant, union_share_ns).
type sweepRow struct {
	sweptKernel
	k              sweepKernel
	stream         int32
	ended, hasNext bool
}

// streamState is one stream's state: events active and compute events
// active, its last instant, the compute integrals then, its
// hidden-by-compute integral up to there, and its last event's row.
type streamState struct {
	active, comp int64
	at           int64
	c1, c2       int64
	byComp       int64
	seen         bool
	last         int32
}

// endAt is a running event in groupSweep's heap.
type endAt struct {
	end, id int64
	row     int32
}

// newGroupSweep is a sweep of one group after starts starts.
func newGroupSweep(starts *int64) *groupSweep {
	return &groupSweep{starts: starts, streams: map[int64]int32{}, lastPoint: -1}
}

// reset makes g ready for the next group, keeping its done rows and the
// space it holds.
func (g *groupSweep) reset() {
	clear(g.streams)
	*g = groupSweep{starts: g.starts, streams: g.streams, st: g.st[:0], rows: g.rows[:0], free: g.free[:0],
		running: g.running[:0], lastPoint: -1, done: g.done, comm: commAcc{st: g.comm.st[:0], out: g.comm.out[:0]}}
}

// touch brings stream s's hidden-by-compute integral up to instant t,
// under its state since its previous instant.
func (g *groupSweep) touch(s int32, t int64) {
	x := &g.st[s]
	if x.seen && x.at != t && x.active > 0 {
		if x.comp > 0 {
			x.byComp += g.c2 - x.c2
		} else {
			x.byComp += g.c1 - x.c1
		}
	}
	x.at, x.c1, x.c2, x.seen = t, g.c1, g.c2, true
}

// finish moves row i to done once it is complete, and frees its slot.
func (g *groupSweep) finish(i int32) {
	if r := &g.rows[i]; r.ended && r.hasNext && i != g.lastPoint {
		g.done = append(g.done, r.sweptKernel)
		r.ended = false // never again
		g.free = append(g.free, i)
	}
}

// point makes row i the last point seen.
func (g *groupSweep) point(i int32) {
	prev := g.lastPoint
	g.lastPoint = i
	if prev >= 0 {
		g.finish(prev)
	}
}

// feed sweeps the next piece of the group's events (in start, then id
// order, after every event fed before); last says it is the group's last.
// Ends at or after the piece's last start wait for the next piece, whose
// starts may come first.
func (g *groupSweep) feed(ks []sweepKernel, last bool) {
	i := 0
	for {
		haveStart, haveEnd := i < len(ks), len(g.running) > 0
		if !haveStart && (!last || !haveEnd) {
			break
		}
		var t int64
		switch {
		case haveStart && haveEnd:
			t = min(ks[i].ts, g.running[0].end)
		case haveStart:
			t = ks[i].ts
		default:
			t = g.running[0].end
		}
		if g.started {
			gap := t - g.prevT
			if g.nActive >= 1 && g.lastPoint >= 0 {
				g.rows[g.lastPoint].unionShare += gap
			}
			if g.nActive >= 2 {
				g.multi += gap
			}
			if g.nComp >= 1 {
				g.c1 += gap
			}
			if g.nComp >= 2 {
				g.c2 += gap
			}
		}
		g.prevT, g.started = t, true
		for ; i < len(ks) && ks[i].ts == t; i++ {
			g.start(&ks[i], t)
		}
		if i == len(ks) && !last {
			// more starts at t may come in the next piece: before its ends
			break
		}
		for len(g.running) > 0 && g.running[0].end == t {
			g.end(g.pop(), t)
		}
	}
	if last {
		// every event has ended; the last of each stream has no next
		for s := range g.st {
			g.rows[g.st[s].last].hasNext = true
		}
		lp := g.lastPoint
		g.lastPoint = -1
		if lp >= 0 {
			g.finish(lp)
		}
		for s := range g.st {
			g.finish(g.st[s].last)
		}
	}
}

func (g *groupSweep) start(k *sweepKernel, t int64) {
	s, ok := g.streams[k.stream]
	if !ok {
		s = int32(len(g.streams))
		g.streams[k.stream] = s
		g.st = append(g.st, streamState{last: -1})
	}
	var i int32
	if n := len(g.free); n > 0 {
		i, g.free = g.free[n-1], g.free[:n-1]
	} else {
		i = int32(len(g.rows))
		g.rows = append(g.rows, sweepRow{})
	}
	g.touch(s, t)
	*g.starts++
	x := &g.st[s]
	r := &g.rows[i]
	*r = sweepRow{k: *k, stream: s}
	r.id, r.prev, r.next = k.id, null, null
	r.startRank = *g.starts
	r.hidden = -g.multi
	r.hiddenByComp = -x.byComp
	if p := x.last; p >= 0 {
		r.prev = g.rows[p].id
		g.rows[p].next, g.rows[p].hasNext = k.id, true
		g.finish(p)
	}
	x.last = i
	if x.active++; x.active == 1 {
		g.nActive++
	}
	if k.comp {
		if x.comp++; x.comp == 1 {
			g.nComp++
		}
	}
	g.push(endAt{end: k.ts + k.dur, id: k.id, row: i})
	g.comm.start(k)
	g.point(i)
}

func (g *groupSweep) end(i int32, t int64) {
	r := &g.rows[i]
	s := r.stream
	g.touch(s, t)
	x := &g.st[s]
	r.startsToEnd = *g.starts
	r.hidden += g.multi
	r.hiddenByComp += x.byComp
	if x.active--; x.active == 0 {
		g.nActive--
	}
	if r.k.comp {
		if x.comp--; x.comp == 0 {
			g.nComp--
		}
	}
	r.ended = true
	g.comm.end(&r.k)
	g.point(i)
}

// push and pop keep running a heap by end, then id (container/heap). They
// move entries with Fix rather than heap.Push and heap.Pop, which box each
// entry in an interface: an allocation an event.
func (g *groupSweep) push(e endAt) {
	g.running = append(g.running, e)
	heap.Fix((*endHeap)(&g.running), len(g.running)-1)
}

// pop removes the running event that ends first and returns its row.
func (g *groupSweep) pop() int32 {
	h := (*endHeap)(&g.running)
	top := g.running[0].row
	h.Swap(0, h.Len()-1)
	g.running = g.running[:h.Len()-1]
	if h.Len() > 0 {
		heap.Fix(h, 0)
	}
	return top
}

// endHeap is groupSweep.running as a heap.Interface.
type endHeap []endAt

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i].before(h[j]) }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(endAt)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (a endAt) before(b endAt) bool { return a.end < b.end || a.end == b.end && a.id < b.id }

// streamPieceKernels bounds the events of a piece of sweepStreamed: each
// event read costs about 150 bytes of Go heap until the piece is saved.
const streamPieceKernels = 1 << 16

// sweepStreamed sweeps group g, too large to hold whole, in pieces of at
// most chunk events in start and id order: the events between two of
// overlap_store_bounds.sql's places (overlap_store_piece.sql, or
// overlap_store_kernels.sql for a key standing for several groups), each
// piece's complete rows saved before the next is read; its communication
// overlap rows go to comm.
func sweepStreamed(ctx context.Context, conn *sql.Conn, args []any, g *overlapGroup, chunk int64, starts *int64, comm *[]commRow) error {
	chunk = min(chunk, streamPieceKernels)
	bounds, err := streamBounds(ctx, conn, args, g.key, chunk)
	if err != nil {
		return fmt.Errorf("overlap_store_bounds: %w", err)
	}
	gs := newGroupSweep(starts)
	var read int64
	var from streamPlace // the last event read: none yet
	ks := make([]sweepKernel, 0, min(chunk, g.kernels))
	for i := 0; i <= len(bounds); i++ {
		to := streamPlace{}
		if i < len(bounds) {
			to = bounds[i]
		}
		ks = ks[:0]
		name, piece := "overlap_store_kernels", append([]any{sql.Named("lo", g.key), sql.Named("hi", g.key)}, args...)
		if g.single {
			// the group by its columns, not its key (overlap_store_piece.sql)
			var device any
			if g.device.Valid {
				device = g.device.Int64
			}
			name, piece = "overlap_store_piece", []any{sql.Named("run", g.run), sql.Named("trace", g.trace),
				sql.Named("stage", g.stage), sql.Named("device", device)}
		}
		err := eachSweepKernel(ctx, conn, name, append([]any{sql.Named("ts", from.ts), sql.Named("id", from.id),
			sql.Named("to_ts", to.ts), sql.Named("to_id", to.id)}, piece...),
			func(k sweepKernel) { ks = append(ks, k) })
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		read += int64(len(ks))
		last := i == len(bounds)
		if int64(len(ks)) > chunk || last && read != g.kernels {
			// the group was counted in the same transaction: never expected
			return fmt.Errorf("read %d GPU events of a group holding %d", read, g.kernels)
		}
		gs.feed(ks, last)
		if len(gs.done) > 0 {
			if err := storeSwept(conn, gs.done); err != nil {
				return err
			}
			gs.done = gs.done[:0]
		}
		from = to
	}
	for _, p := range gs.comm.rows() {
		*comm = append(*comm, commRow{g: g, commParts: p})
	}
	return nil
}

// streamPlace is an event's place in start and id order; nil fields mean
// none (the group's start or end).
type streamPlace struct{ ts, id any }

// streamBounds reads the places of every nth event of group key
// (overlap_store_bounds.sql).
func streamBounds(ctx context.Context, conn *sql.Conn, args []any, key, n int64) ([]streamPlace, error) {
	rows, err := inline.Query(ctx, conn, stmt("overlap_store_bounds"), append([]any{sql.Named("key", key), sql.Named("n", n)}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []streamPlace
	for rows.Next() {
		var ts, id int64
		if err := rows.Scan(&ts, &id); err != nil {
			return nil, err
		}
		out = append(out, streamPlace{ts, id})
	}
	return out, rows.Err()
}
