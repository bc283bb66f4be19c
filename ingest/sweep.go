package ingest

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"

	"golang.org/x/sync/errgroup"
)

// sweepFrame is the compact form of a python_function event the per-thread
// sweep needs; a trace keeps one per frame until its events are all read.
type sweepFrame struct {
	ts, end  int64
	pyID     int64 // Python id, null when absent
	parentID int64 // Python parent id, null when absent
	ordinal  uint32
	thread   int32
	site     int32
	tier     int8
}

// sweepPoint is a launch or cpu_op: an instant on a thread whose Python
// site is wanted, with what linking needs of it once the site is known.
type sweepPoint struct {
	ts          int64
	correlation int64 // a launch's (null for an op)
	extern      int64
	ordinal     uint32
	thread      int32
	kind        int8 // derivedLaunchSite or derivedOpSite
	graph       bool // a launch of a CUDA graph
}

// Kinds of rows in the _derived table.
const (
	derivedLaunchSite = 1
	derivedOpSite     = 2
)

type derivedRow struct {
	kind    int8
	ordinal int64
	value   int32
}

// threads numbers (pid, tid) pairs compactly.
type threads struct {
	ids  map[[2]int64]int32
	keys [][2]int64 // by id
}

func (t *threads) id(pid, tid int64) int32 {
	k := [2]int64{pid, tid}
	if id, ok := t.ids[k]; ok {
		return id
	}
	if t.ids == nil {
		t.ids = map[[2]int64]int32{}
	}
	id := int32(len(t.keys))
	t.ids[k] = id
	t.keys = append(t.keys, k)
	return id
}

// Sizes of the sweep records in a spill file.
const (
	frameBytes = 8*4 + 4*3 + 1
	pointBytes = 8*3 + 4*2 + 2
)

func encFrame(b []byte, f *sweepFrame) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(f.ts))
	le.PutUint64(b[8:], uint64(f.end))
	le.PutUint64(b[16:], uint64(f.pyID))
	le.PutUint64(b[24:], uint64(f.parentID))
	le.PutUint32(b[32:], f.ordinal)
	le.PutUint32(b[36:], uint32(f.thread))
	le.PutUint32(b[40:], uint32(f.site))
	b[44] = byte(f.tier)
}

func decFrame(b []byte, f *sweepFrame) {
	le := binary.LittleEndian
	*f = sweepFrame{ts: int64(le.Uint64(b[0:])), end: int64(le.Uint64(b[8:])), pyID: int64(le.Uint64(b[16:])),
		parentID: int64(le.Uint64(b[24:])), ordinal: le.Uint32(b[32:]), thread: int32(le.Uint32(b[36:])),
		site: int32(le.Uint32(b[40:])), tier: int8(b[44])}
}

func encPoint(b []byte, p *sweepPoint) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(p.ts))
	le.PutUint64(b[8:], uint64(p.correlation))
	le.PutUint64(b[16:], uint64(p.extern))
	le.PutUint32(b[24:], p.ordinal)
	le.PutUint32(b[28:], uint32(p.thread))
	b[32] = byte(p.kind)
	b[33] = 0
	if p.graph {
		b[33] = 1
	}
}

func decPoint(b []byte, p *sweepPoint) {
	le := binary.LittleEndian
	*p = sweepPoint{ts: int64(le.Uint64(b[0:])), correlation: int64(le.Uint64(b[8:])), extern: int64(le.Uint64(b[16:])),
		ordinal: le.Uint32(b[24:]), thread: int32(le.Uint32(b[28:])), kind: int8(b[32]), graph: b[33] == 1}
}

// sweepChunk is how many sweep records one block holds.
const sweepChunk = 1 << 16

// The orders compare field by field and stop at the first that differs:
// cmp.Or takes every comparison as an argument, so it computed all of them
// for each of the sorts' and merges' comparisons (frameOrder alone was
// about 1% of a Python-stack trace's ingest instructions).

func frameOrder(a, b *sweepFrame) int {
	// Outer frames first at equal start; ordinal keeps it deterministic.
	if a.thread != b.thread {
		return cmp.Compare(a.thread, b.thread)
	}
	if a.ts != b.ts {
		return cmp.Compare(a.ts, b.ts)
	}
	if a.end != b.end {
		return cmp.Compare(b.end, a.end)
	}
	return cmp.Compare(a.ordinal, b.ordinal)
}

func pointOrder(a, b *sweepPoint) int {
	if a.thread != b.thread {
		return cmp.Compare(a.thread, b.thread)
	}
	if a.ts != b.ts {
		return cmp.Compare(a.ts, b.ts)
	}
	return cmp.Compare(a.ordinal, b.ordinal)
}

// sweep walks each thread's Python frames in time order with a stack. It
// hands every frame with its nesting depth to frame, and emits for every
// launch and cpu_op the innermost frame of the best tier open at that instant
// (framework code beats other user code; wrappers never count); point
// hears of every launch and cpu_op with that site (0: none).
func sweep(frameList *chunks[sweepFrame], pointList *chunks[sweepPoint], frame func(*sweepFrame, int32) error, emit func(derivedRow) error,
	point func(*sweepPoint, int32)) error {
	frames := frameList.sorted(frameOrder)
	points := pointList.sorted(pointOrder)
	if err := sweepRecords(frames, points, frame, emit, point); err != nil {
		return err
	}
	return errors.Join(frames.err, points.err)
}

func sweepRecords(frames *merged[sweepFrame], points *merged[sweepPoint], frame func(*sweepFrame, int32) error, emit func(derivedRow) error,
	point func(*sweepPoint, int32)) error {
	type open struct {
		end  int64
		best [3]int32 // innermost site of each tier on the stack up to here, 0 = none
	}
	var stack []open
	thread := int32(-1)
	for {
		f, p := frames.peek(), points.peek()
		if f == nil && p == nil {
			return nil
		}
		// The next event: a frame starting at or before the next point opens
		// first, so a launch at a frame's first instant belongs to it.
		takeFrame := p == nil || f != nil && (f.thread < p.thread || f.thread == p.thread && f.ts <= p.ts)
		var t int64
		var th int32
		if takeFrame {
			t, th = f.ts, f.thread
		} else {
			t, th = p.ts, p.thread
		}
		if th != thread {
			stack = stack[:0]
			thread = th
		}
		for len(stack) > 0 && stack[len(stack)-1].end <= t {
			stack = stack[:len(stack)-1]
		}
		if takeFrame {
			if err := frame(f, int32(len(stack))); err != nil {
				return err
			}
			o := open{end: f.end}
			if len(stack) > 0 {
				o.best = stack[len(stack)-1].best
			}
			if f.tier > 0 {
				o.best[f.tier] = f.site
			}
			// A zero-length frame contains no instant; it still has a depth.
			if f.end > f.ts {
				stack = append(stack, o)
			}
			frames.pop()
			continue
		}
		var site int32
		if len(stack) > 0 {
			best := stack[len(stack)-1].best
			site = best[2]
			if site == 0 {
				site = best[1]
			}
		}
		kind, ordinal := p.kind, p.ordinal
		point(p, site)
		points.pop()
		if site != 0 {
			if err := emit(derivedRow{kind, int64(ordinal), site}); err != nil {
				return err
			}
		}
	}
}

// swept is a stretch of the sweep's output: frames turned into rows R,
// and derived rows.
type swept[R any] struct {
	frames  []R
	derived []derivedRow
}

// sweptBatch is how many records one swept stretch holds.
const sweptBatch = 8 << 10

// sweepAside runs sweep on its own goroutine, which also turns each frame
// into its row (row), while store, on a second one, takes the output a
// stretch at a time from next (nil after the last; each stretch is the
// sweep's again at the next call). Storing cost as much as the sweep
// itself, so the two no longer take turns on one core.
func sweepAside[R any](ctx context.Context, frameList *chunks[sweepFrame], pointList *chunks[sweepPoint],
	row func(*sweepFrame, int32) R, point func(*sweepPoint, int32), store func(next func() (*swept[R], error)) error) error {
	g, gctx := errgroup.WithContext(ctx)
	out := make(chan *swept[R], 4)
	// Stretches go back to the sweep once stored: a handful in all.
	free := make(chan *swept[R], 6)
	g.Go(func() error {
		defer close(out)
		cur := &swept[R]{}
		send := func() error {
			select {
			case out <- cur:
			case <-gctx.Done():
				return gctx.Err()
			}
			select {
			case cur = <-free:
				cur.frames, cur.derived = cur.frames[:0], cur.derived[:0]
			default:
				cur = &swept[R]{}
			}
			return nil
		}
		err := sweep(frameList, pointList, func(f *sweepFrame, depth int32) error {
			cur.frames = append(cur.frames, row(f, depth))
			if len(cur.frames) == sweptBatch {
				return send()
			}
			return nil
		}, func(r derivedRow) error {
			cur.derived = append(cur.derived, r)
			if len(cur.derived) == sweptBatch {
				return send()
			}
			return nil
		}, point)
		if err != nil {
			return err
		}
		return send()
	})
	g.Go(func() error {
		var last *swept[R]
		return store(func() (*swept[R], error) {
			if last != nil {
				select {
				case free <- last:
				default:
				}
				last = nil
			}
			select {
			case s, ok := <-out:
				if !ok {
					// the sweep's error, if any, comes from g.Wait
					return nil, nil
				}
				last = s
				return s, nil
			case <-gctx.Done():
				return nil, gctx.Err()
			}
		})
	})
	return g.Wait()
}
