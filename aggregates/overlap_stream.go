package aggregates

import (
	"container/heap"
	"context"
	"database/sql"
	"fmt"

	"github.com/tracehouse/tracehouse/inline"
)

// streamRow is one event of a group swept a piece at a time, kept until
// its row is complete: it has ended, the next event of its stream has
// started (or the group ended), and it is not the last point seen (which
// takes the gap to the next instant, union_share_ns).
type streamRow struct {
	sweptKernel
	k                       sweepKernel
	stream                  int32
	ended, hasNext, emitted bool
}

// endHeap orders the running events by end, then id (sweepGroup's ends).
type endHeap []*streamRow

func (h endHeap) Len() int { return len(h) }
func (h endHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if ae, be := a.k.ts+a.k.dur, b.k.ts+b.k.dur; ae != be {
		return ae < be
	}
	return a.k.id < b.k.id
}
func (h endHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)   { *h = append(*h, x.(*streamRow)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// groupStream is sweepGroup and commGroup for one group whose events come
// a piece at a time (in start, then id order): the same instants in the
// same order, with the running events in a heap by end instead of every
// event sorted by end, so that it holds the running events and one
// pending row per stream, not the group. TestSweepOverlapMatchesSQL holds
// it to kernel_overlap_for like sweepGroup.
type groupStream struct {
	starts         *int64
	streams        map[int64]int32
	st             []streamState
	last           []*streamRow // by stream: its last event so far
	running        endHeap
	nActive, nComp int
	multi, c1, c2  int64
	prevT          int64
	started        bool
	lastPoint      *streamRow
	done           []sweptKernel
	comm           commAcc
}

// streamState is one stream's state in sweepGroup: events active and
// compute events active, its last instant, the compute integrals then, and
// its hidden-by-compute integral up to there.
type streamState struct {
	active, comp int64
	at           int64
	c1, c2       int64
	byComp       int64
	seen         bool
}

// touch is sweepGroup's: stream s's hidden-by-compute integral up to t.
func (g *groupStream) touch(s int32, t int64) {
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

// finish moves r to done once its row is complete.
func (g *groupStream) finish(r *streamRow) {
	if r != nil && r.ended && r.hasNext && r != g.lastPoint && !r.emitted {
		r.emitted = true
		g.done = append(g.done, r.sweptKernel)
	}
}

// point makes r the last point seen.
func (g *groupStream) point(r *streamRow) {
	prev := g.lastPoint
	g.lastPoint = r
	g.finish(prev)
}

// feed sweeps the next piece of the group's events (in start, then id
// order, after every event fed before); last says it is the group's last.
// Ends at or after the piece's last start wait for the next piece, whose
// starts may come first.
func (g *groupStream) feed(ks []sweepKernel, last bool) {
	i := 0
	for {
		haveStart, haveEnd := i < len(ks), g.running.Len() > 0
		if !haveStart && (!last || !haveEnd) {
			break
		}
		var t int64
		switch {
		case haveStart && haveEnd:
			t = min(ks[i].ts, g.running[0].k.ts+g.running[0].k.dur)
		case haveStart:
			t = ks[i].ts
		default:
			t = g.running[0].k.ts + g.running[0].k.dur
		}
		if g.started {
			gap := t - g.prevT
			if g.nActive >= 1 && g.lastPoint != nil {
				g.lastPoint.unionShare += gap
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
			g.start(ks[i], t)
		}
		if i == len(ks) && !last {
			// more starts at t may come in the next piece: before its ends
			break
		}
		for g.running.Len() > 0 && g.running[0].k.ts+g.running[0].k.dur == t {
			g.end(heap.Pop(&g.running).(*streamRow), t)
		}
	}
	if last {
		// every event has ended; the last of each stream has no next
		for _, r := range g.last {
			r.hasNext = true
		}
		lp := g.lastPoint
		g.lastPoint = nil
		g.finish(lp)
		for _, r := range g.last {
			g.finish(r)
		}
	}
}

func (g *groupStream) start(k sweepKernel, t int64) {
	s, ok := g.streams[k.stream]
	if !ok {
		s = int32(len(g.streams))
		g.streams[k.stream] = s
		g.st = append(g.st, streamState{})
		g.last = append(g.last, nil)
	}
	g.touch(s, t)
	*g.starts++
	r := &streamRow{k: k, stream: s}
	r.id, r.prev, r.next = k.id, null, null
	r.startRank = *g.starts
	r.hidden = -g.multi
	r.hiddenByComp = -g.st[s].byComp
	if p := g.last[s]; p != nil {
		r.prev = p.id
		p.next, p.hasNext = k.id, true
		g.finish(p)
	}
	g.last[s] = r
	if g.st[s].active++; g.st[s].active == 1 {
		g.nActive++
	}
	if k.comp {
		if g.st[s].comp++; g.st[s].comp == 1 {
			g.nComp++
		}
	}
	heap.Push(&g.running, r)
	g.comm.start(&r.k)
	g.point(r)
}

func (g *groupStream) end(r *streamRow, t int64) {
	s := r.stream
	g.touch(s, t)
	r.startsToEnd = *g.starts
	r.hidden += g.multi
	r.hiddenByComp += g.st[s].byComp
	if g.st[s].active--; g.st[s].active == 0 {
		g.nActive--
	}
	if r.k.comp {
		if g.st[s].comp--; g.st[s].comp == 0 {
			g.nComp--
		}
	}
	r.ended = true
	g.comm.end(&r.k)
	g.point(r)
}

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
	gs := &groupStream{starts: starts, streams: map[int64]int32{}}
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
