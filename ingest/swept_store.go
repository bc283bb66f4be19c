package ingest

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/tracehouse/tracehouse/schema"
)

// frameValues is a py_frame_events row as the sweep makes it; null stands
// for NULL.
type frameValues struct {
	ordinal, frameID, parentID, ts, dur, pid, tid int64
	site, depth                                   int32
}

var frameColumnNames = []string{"trace_id", "ordinal", "frame_id", "parent_id", "site_id", "ts_ns", "dur_ns", "pid", "tid", "depth"}

var frameColumns = columns(frameColumnNames, duckdb.TYPE_INTEGER, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT,
	duckdb.TYPE_INTEGER, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, duckdb.TYPE_INTEGER)

var derivedColumnNames = []string{"kind", "ordinal", "value"}

var derivedColumns = columns(derivedColumnNames, duckdb.TYPE_TINYINT, duckdb.TYPE_BIGINT, duckdb.TYPE_INTEGER)

func columns(names []string, types ...duckdb.Type) []schema.Column {
	cols := make([]schema.Column, len(names))
	for i, n := range names {
		cols[i] = schema.Column{Name: n, Type: types[i]}
	}
	return cols
}

// derivedRec is a derivedRow kept until the frames are stored (the sweep
// makes both, and one connection runs one INSERT at a time). Like the
// sweep's records, full blocks of them are sorted and spill to disk, so
// that keeping them costs memory no longer (9 bytes each).
type derivedRec struct {
	ordinal uint32
	value   int32
	kind    int8
}

const derivedBytes = 4 + 4 + 1

func derivedOrder(a, b *derivedRec) int {
	if a.kind != b.kind {
		return cmp.Compare(a.kind, b.kind)
	}
	return cmp.Compare(a.ordinal, b.ordinal)
}

func encDerived(b []byte, r *derivedRec) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], r.ordinal)
	le.PutUint32(b[4:], uint32(r.value))
	b[8] = byte(r.kind)
}

func decDerived(b []byte, r *derivedRec) {
	le := binary.LittleEndian
	*r = derivedRec{ordinal: le.Uint32(b[0:]), value: int32(le.Uint32(b[4:])), kind: int8(b[8])}
}

// storeSwept sweeps the trace's frames and instants (sweepAside) and
// inserts the frames, with their depth, into py_frame_events, typed
// (schema.Warehouse.InsertRows); then the held launches and CPU ops, each
// with its site (the derived rows) and its time moved by base, or, when
// the SQL links the trace (nothing held), the derived rows into _derived
// for launch_sites.sql and op_sites.sql.
func (l *loader) storeSwept(ctx context.Context, t *traceState, base int64) error {
	derived := newChunks[derivedRec](sweepChunk)
	derived.sortAhead(derivedOrder)
	derived.spillTo(l.env.spillDir, derivedBytes, encDerived, decDerived)
	defer derived.close()
	err := sweepAside(ctx, t.frames, t.points, func(f *sweepFrame, depth int32) frameValues {
		key := t.threads.keys[f.thread]
		return frameValues{ordinal: int64(f.ordinal), frameID: f.pyID, parentID: f.parentID, ts: f.ts + base, dur: f.end - f.ts,
			pid: key[0], tid: key[1], site: f.site, depth: depth}
	}, func(p *sweepPoint, site int32) {
		t.link.point(p, site, t.threads.keys[p.thread])
	}, func(next func() (*swept[frameValues], error)) error {
		return l.env.rows.InsertRows(ctx, l.conn, schema.PyFrameRows, frameColumns,
			&frameSource{trace: int32(t.id), next: next, derived: derived})
	})
	if err != nil {
		return err
	}
	rows := derived.sorted(derivedOrder)
	if t.launches == nil {
		if err := l.env.rows.InsertRows(ctx, l.conn, "_derived", derivedColumns, &derivedSource{rows: rows}); err != nil {
			return err
		}
		return rows.err
	}
	ls := &sitedSource[launchRow]{rows: t.launches.reader(), values: launchValues, sites: sitesOf{rows: rows, kind: derivedLaunchSite},
		key: t.key, trace: int32(t.id), base: base}
	if err := l.env.rows.InsertRows(ctx, l.conn, schema.Launches, launchColumns, ls); err != nil {
		return err
	}
	ops := &sitedSource[opRow]{rows: t.ops.reader(), values: opValues, sites: sitesOf{rows: rows, kind: derivedOpSite},
		key: t.key, trace: int32(t.id), base: base}
	if err := l.env.rows.InsertRows(ctx, l.conn, schema.CPUOps, opColumns, ops); err != nil {
		return err
	}
	if rows.peek() != nil {
		return errors.New("internal error: a site swept for a launch or CPU op not held")
	}
	return rows.err
}

// sitesOf hands out the derived rows of one kind (each launch's or each
// CPU op's site, those with none left out) in ordinal order.
type sitesOf struct {
	rows *merged[derivedRec]
	kind int8
}

// at is the site of the row at ordinal, null for none; rows are asked for
// in ordinal order.
func (s *sitesOf) at(ordinal int64) (int64, error) {
	d := s.rows.peek()
	if d == nil || d.kind != s.kind || int64(d.ordinal) > ordinal {
		return null, nil
	}
	if int64(d.ordinal) < ordinal {
		return 0, fmt.Errorf("internal error: a site swept for event %d, which is not held", d.ordinal)
	}
	s.rows.pop()
	return int64(d.value), nil
}

var launchColumns = columns([]string{"launch_id", "trace_id", "name", "ts_ns", "dur_ns", "pid", "tid", "correlation", "external_id", "site_id"},
	duckdb.TYPE_BIGINT, duckdb.TYPE_INTEGER, duckdb.TYPE_VARCHAR, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT,
	duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, duckdb.TYPE_INTEGER)

var opColumns = columns([]string{"op_id", "trace_id", "name", "ts_ns", "dur_ns", "pid", "tid", "external_id", "sequence_number",
	"input_dims", "input_types", "site_id"},
	duckdb.TYPE_BIGINT, duckdb.TYPE_INTEGER, duckdb.TYPE_VARCHAR, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT,
	duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT,
	duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR, duckdb.TYPE_INTEGER)

// sitedRow is a held launch's or CPU op's values in its table's column
// order: an id, the trace, then these, then the site.
type sitedRow struct {
	name    string
	ts, dur int64     // ts relative to the trace's base
	ints    [4]int64  // null for none
	strs    [2]string // the first nstrs; "" for none
	nstrs   int
}

func launchValues(x *launchRow) sitedRow {
	return sitedRow{name: x.name, ts: x.ts, dur: x.dur, ints: [4]int64{x.pid, x.tid, x.correlation, x.externalID}}
}

func opValues(x *opRow) sitedRow {
	return sitedRow{name: x.name, ts: x.ts, dur: x.dur, ints: [4]int64{x.pid, x.tid, x.externalID, x.seq},
		strs: [2]string{x.dims, x.types}, nstrs: 2}
}

// sitedSource is held launches (launchColumns, by launchValues) or CPU ops
// (opColumns, by opValues) as rows: what appending them, launch_sites.sql
// or op_sites.sql, and shift_launches.sql or shift_cpu_ops.sql stored
// before.
type sitedSource[T any] struct {
	rows   *heldReader[T]
	values func(*T) sitedRow
	sites  sitesOf
	key    int64
	trace  int32
	base   int64
}

func (s *sitedSource[T]) Fill(chunk duckdb.DataChunk) (int, error) {
	n := 0
	for limit := schema.ChunkRows(); n < limit; n++ {
		x, ord, err := s.rows.next()
		if err != nil {
			return 0, err
		}
		if x == nil {
			break
		}
		site, err := s.sites.at(ord)
		if err != nil {
			return 0, err
		}
		r := s.values(x)
		// Each value set separately (frameSource says why).
		err = errors.Join(
			duckdb.SetChunkValue(chunk, 0, n, s.key+ord),
			duckdb.SetChunkValue(chunk, 1, n, s.trace),
			duckdb.SetChunkValue(chunk, 2, n, r.name),
			duckdb.SetChunkValue(chunk, 3, n, r.ts+s.base),
			duckdb.SetChunkValue(chunk, 4, n, r.dur))
		col := 5
		for _, v := range r.ints {
			if v == null {
				err = keep(err, chunk.SetValue(col, n, nil))
			} else {
				err = keep(err, duckdb.SetChunkValue(chunk, col, n, v))
			}
			col++
		}
		for _, v := range r.strs[:r.nstrs] {
			if v == "" {
				err = keep(err, chunk.SetValue(col, n, nil))
			} else {
				err = keep(err, duckdb.SetChunkValue(chunk, col, n, v))
			}
			col++
		}
		if site == null {
			err = keep(err, chunk.SetValue(col, n, nil))
		} else {
			err = keep(err, duckdb.SetChunkValue(chunk, col, n, int32(site)))
		}
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// frameSource is the sweep's frames as rows of py_frame_events; it keeps
// the derived rows of each stretch in derived.
type frameSource struct {
	trace   int32
	next    func() (*swept[frameValues], error)
	cur     *swept[frameValues]
	pos     int
	done    bool
	derived *chunks[derivedRec]
}

func (s *frameSource) Fill(chunk duckdb.DataChunk) (int, error) {
	n := 0
	for limit := schema.ChunkRows(); n < limit && !s.done; {
		if s.cur == nil || s.pos == len(s.cur.frames) {
			next, err := s.next()
			if err != nil {
				return 0, err
			}
			if next == nil {
				s.done = true
				break
			}
			s.cur, s.pos = next, 0
			for _, d := range next.derived {
				s.derived.add(derivedRec{ordinal: uint32(d.ordinal), value: d.value, kind: int8(d.kind)})
			}
			continue
		}
		r := &s.cur.frames[s.pos]
		s.pos++
		// Each value set separately: duckdb.SetChunkValue takes the chunk
		// by value, and through a helper function that copy went to the
		// heap, one allocation per value.
		err := errors.Join(
			duckdb.SetChunkValue(chunk, 0, n, s.trace),
			duckdb.SetChunkValue(chunk, 1, n, r.ordinal),
			duckdb.SetChunkValue(chunk, 4, n, r.site),
			duckdb.SetChunkValue(chunk, 5, n, r.ts),
			duckdb.SetChunkValue(chunk, 6, n, r.dur),
			duckdb.SetChunkValue(chunk, 9, n, r.depth))
		for _, c := range [...]struct {
			col int
			v   int64
		}{{2, r.frameID}, {3, r.parentID}, {7, r.pid}, {8, r.tid}} {
			col, v := c.col, c.v
			if v == null {
				err = keep(err, chunk.SetValue(col, n, nil))
			} else {
				err = keep(err, duckdb.SetChunkValue(chunk, col, n, v))
			}
		}
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// derivedSource is the kept derived rows as rows of _derived.
type derivedSource struct {
	rows *merged[derivedRec]
}

func (s *derivedSource) Fill(chunk duckdb.DataChunk) (int, error) {
	n := 0
	for limit := schema.ChunkRows(); n < limit; n++ {
		r := s.rows.peek()
		if r == nil {
			break
		}
		if err := errors.Join(
			duckdb.SetChunkValue(chunk, 0, n, r.kind),
			duckdb.SetChunkValue(chunk, 1, n, int64(r.ordinal)),
			duckdb.SetChunkValue(chunk, 2, n, r.value),
		); err != nil {
			return 0, err
		}
		s.rows.pop()
	}
	return n, nil
}

// keep is err, else next: the first failure among a row's value setters
// (errors.Join of each value set with the row's error so far was about
// 0.4% of an ingest's instructions).
func keep(err, next error) error {
	if err != nil {
		return err
	}
	return next
}
