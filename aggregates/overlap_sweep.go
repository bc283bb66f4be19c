package aggregates

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/tracehouse/tracehouse/inline"
	"github.com/tracehouse/tracehouse/schema"
)

// sweepChunkKernels bounds the GPU events one read of sweepOverlap holds:
// groups are read in ranges of at most this many (a larger group alone), so
// Go's share of saving a run with millions of kernels stays about 30 MiB.
const sweepChunkKernels = 1 << 18

// sweepGroupLimit is the largest group sweepOverlap reads whole (about
// 110 bytes an event, so 55 MiB): a larger one is swept a piece of
// sweepChunkKernels events at a time (sweepStreamed), so that memory stays
// bounded whatever a single trace holds on one device. (Such runs were
// saved by the SQL macro, which spills but took 18-30 s and 350-436 MiB
// for the 1.68 M events of a 1 GB kernel-dense trace.) The idle sweep
// leaves a larger step to the SQL library.
const sweepGroupLimit = 1 << 19

// sweepKernel is one GPU event of an overlap group (trace, stage, device),
// as overlap_store_kernels.sql reads it.
type sweepKernel struct {
	id, stream, ts, dur int64
	comp                bool
	rank                int32
	commKind            int8 // commKind*: what _comm_parts_for counts it as
}

// What an event is to the communication overlap (sqllib/comm.sql): its
// category communication, any other but memory (computation), or neither.
const (
	commNeither = 0
	commComm    = 1
	commComp    = 2
)

// sweptKernel is what kernel_overlap_for computes for one GPU event besides
// what the kernels table holds.
type sweptKernel struct {
	id                     int64
	hidden, hiddenByComp   int64
	startRank, startsToEnd int64
	unionShare             int64
	prev, next             int64 // null when none
}

// commParts is one row of comm_overlap_store: the communication time,
// computation time and their overlap of one rank within one group.
type commParts struct {
	rank                int32
	comm, comp, overlap int64
}

// commAcc accumulates _comm_parts_for's figures (sqllib/comm.sql) of one
// group as its events' starts and ends come, in time order (starts first
// at one instant; the order there adds no time), one row per rank with an
// event of nonzero duration. Between two consecutive instants of a rank's
// events the number of its communication and of its computation events
// running is constant, so each of the three unions grows by the gap
// whenever its indicator holds; a rank's state is brought forward at its
// own instants only (it does not change in between). Events of zero or
// negative duration are no part of it, as in the SQL (dur_ns > 0).
type commAcc struct {
	st  []commState // by rank, in order of first sight (a group has one as a rule)
	out []commParts
}

// commState is one rank's events running and its last instant.
type commState struct {
	ncomm, ncomp int
	at           int64
	row          int
}

func (c *commAcc) find(rank int32) *commState {
	for i := range c.st {
		if c.out[c.st[i].row].rank == rank {
			return &c.st[i]
		}
	}
	c.out = append(c.out, commParts{rank: rank})
	c.st = append(c.st, commState{row: len(c.out) - 1})
	return &c.st[len(c.st)-1]
}

func (c *commAcc) add(k *sweepKernel, t int64, d int) {
	if k.dur <= 0 {
		return
	}
	x := c.find(k.rank)
	if gap := t - x.at; gap > 0 {
		r := &c.out[x.row]
		if x.ncomm > 0 {
			r.comm += gap
		}
		if x.ncomp > 0 {
			r.comp += gap
		}
		if x.ncomm > 0 && x.ncomp > 0 {
			r.overlap += gap
		}
	}
	x.at = t
	switch k.commKind {
	case commComm:
		x.ncomm += d
	case commComp:
		x.ncomp += d
	}
}

// start and end take an event's start and end (events of zero or negative
// duration are no part of it).
func (c *commAcc) start(k *sweepKernel) { c.add(k, k.ts, 1) }
func (c *commAcc) end(k *sweepKernel)   { c.add(k, k.ts+k.dur, -1) }

// rows are the group's rows, in rank order.
func (c *commAcc) rows() []commParts {
	slices.SortFunc(c.out, func(a, b commParts) int { return cmp.Compare(a.rank, b.rank) })
	return c.out
}

// overlapGroup is one group's key and size, and what its rows of
// comm_overlap_store are keyed by besides the rank (overlap_store_groups.sql).
type overlapGroup struct {
	key, kernels int64
	run, trace   int64
	stage        string
	device       sql.NullInt64
	single       bool // one run, trace, stage and device under the key
}

// sweepOverlap fills kernel_overlap_store with kernel_overlap_for's rows
// for runs, inside the caller's transaction on conn: groups are read in
// ranges of at most sweepChunkKernels events (a larger group alone, and
// one over sweepGroupLimit a piece at a time), swept in Go (groupSweep)
// and joined back to their kernels on the way in
// (overlap_store_rows.sql). The SQL macro sorts five times (four of them
// over twice as many points as events), with single-threaded windows
// between: for 85 k kernels its INSERT took 210-255 ms alone, this 85-135
// (bench/README.md).
//
// The same pass fills comm_overlap_store with _comm_parts_for's rows
// (groupSweep's commAcc), which the SQL library computed with the step aggregates at
// about 4 CPU-s per 1 M events (issue 38); the caller records that it did
// (comm_swept_commit.sql).
func sweepOverlap(ctx context.Context, conn *sql.Conn, runs []int64) error {
	return sweepOverlapBy(ctx, conn, runArgs(runs), sweepChunkKernels, sweepGroupLimit)
}

// sweepOverlapBy is sweepOverlap reading ranges of at most chunk events,
// a group over limit events a piece of chunk events at a time (and leaving
// the communication overlap to the SQL library when a group's key covers
// two stages or devices).
func sweepOverlapBy(ctx context.Context, conn *sql.Conn, args []any, chunk, limit int64) error {
	groups, err := overlapGroups(ctx, conn, args)
	if err != nil {
		return fmt.Errorf("overlap_store_groups: %w", err)
	}
	commInGo := true
	for _, g := range groups {
		commInGo = commInGo && g.single
	}
	var starts int64
	var comm []commRow
	for lo := 0; lo < len(groups); {
		if groups[lo].kernels > limit {
			if err := sweepStreamed(ctx, conn, args, &groups[lo], chunk, &starts, &comm); err != nil {
				return err
			}
			lo++
			continue
		}
		hi := lo + 1
		size := groups[lo].kernels
		for hi < len(groups) && groups[hi].kernels <= limit && size+groups[hi].kernels <= chunk {
			size += groups[hi].kernels
			hi++
		}
		if err := sweepRange(ctx, conn, args, groups[lo:hi], &starts, &comm); err != nil {
			return err
		}
		lo = hi
	}
	if !commInGo {
		if _, err := inline.Exec(ctx, conn, stmt("comm_store_rows"), args...); err != nil {
			return fmt.Errorf("comm_store_rows: %w", err)
		}
	} else if err := storeComm(conn, comm); err != nil {
		return err
	}
	if starts >= freeAfterKernels {
		// The events read and swept (about 100 bytes each) are garbage
		// now, but under the process's Go memory limit no collection
		// would come before the next statements, DuckDB's, whose own
		// memory then stacked on them: a 422 k-kernel finish peaked at
		// 436 MiB, in the idle rows' statements.
		debug.FreeOSMemory()
	}
	return nil
}

// freeAfterKernels is how many swept events make sweepOverlap hand the
// memory it used back to the OS (a collection and a scavenge: a few ms).
const freeAfterKernels = 1 << 16

// commRow is a row of comm_overlap_store: a group's key columns and one
// rank's figures in it.
type commRow struct {
	g *overlapGroup
	commParts
}

// storeComm appends the swept communication overlap rows to
// comm_overlap_store, in the caller's transaction on conn.
func storeComm(conn *sql.Conn, rows []commRow) error {
	if len(rows) == 0 {
		return nil
	}
	return schema.WithAppenders(conn, []schema.Spec{{Table: "comm_overlap_store"}}, func(apps []*schema.Appender) error {
		for _, r := range rows {
			var device driver.Value
			if r.g.device.Valid {
				device = int32(r.g.device.Int64)
			}
			if err := apps[0].Append(int32(r.g.run), int32(r.g.trace), r.rank, r.g.stage, device,
				r.comm, r.comp, r.overlap); err != nil {
				return err
			}
		}
		return nil
	})
}

// sweptColumns are the columns of the rows sweepRange hands to
// overlap_store_rows.sql (as the table _swept).
var sweptColumns = []string{"kernel_id", "hidden_ns", "hidden_by_compute_ns", "start_rank", "starts_before_end",
	"union_share_ns", "prev_kernel_id", "next_kernel_id"}

// sweepRange sweeps the groups gs (consecutive in key order), stores their
// per-kernel rows and adds their communication overlap rows to comm.
func sweepRange(ctx context.Context, conn *sql.Conn, args []any, gs []overlapGroup, starts *int64, comm *[]commRow) error {
	ks, err := readSweepKernels(ctx, conn, args, gs)
	if err != nil {
		return fmt.Errorf("overlap_store_kernels: %w", err)
	}
	sw := newGroupSweep(starts)
	sw.done = make([]sweptKernel, 0, len(ks))
	for i := range gs {
		g := &gs[i]
		sw.feed(ks[:g.kernels], true)
		for _, p := range sw.comm.rows() {
			*comm = append(*comm, commRow{g: g, commParts: p})
		}
		sw.reset()
		ks = ks[g.kernels:]
	}
	return storeSwept(conn, sw.done)
}

// storeSwept saves swept rows through overlap_store_rows.sql.
func storeSwept(conn *sql.Conn, out []sweptKernel) error {
	types := make([]duckdb.Type, len(sweptColumns))
	for i := range types {
		types[i] = duckdb.TYPE_BIGINT
	}
	return schema.WithQueryAppender(conn, stmt("overlap_store_rows"), "_swept", sweptColumns, types, func(a *schema.Appender) error {
		for i := range out {
			r := &out[i]
			if err := a.Append(r.id, r.hidden, r.hiddenByComp, r.startRank, r.startsToEnd, r.unionShare,
				nullable(r.prev), nullable(r.next)); err != nil {
				return err
			}
		}
		return nil
	})
}

// readSweepKernels reads the GPU events of the groups gs, in key, start
// and id order (overlap_store_kernels.sql), through the driver
// (eachDriverRow).
func readSweepKernels(ctx context.Context, conn *sql.Conn, args []any, gs []overlapGroup) ([]sweepKernel, error) {
	var n int64
	for _, g := range gs {
		n += g.kernels
	}
	ks := make([]sweepKernel, 0, n)
	err := eachSweepKernel(ctx, conn, "overlap_store_kernels", append([]any{sql.Named("lo", gs[0].key), sql.Named("hi", gs[len(gs)-1].key),
		sql.Named("ts", nil), sql.Named("id", nil), sql.Named("to_ts", nil), sql.Named("to_id", nil)}, args...),
		func(k sweepKernel) { ks = append(ks, k) })
	if err != nil {
		return nil, err
	}
	if int64(len(ks)) != n {
		// the groups were counted in the same transaction: never expected
		return nil, fmt.Errorf("read %d GPU events of groups holding %d", len(ks), n)
	}
	return ks, nil
}

// eachSweepKernel reads the rows of overlap_store_kernels.sql (or of
// overlap_store_piece.sql: name) for args.
func eachSweepKernel(ctx context.Context, conn *sql.Conn, name string, args []any, f func(sweepKernel)) error {
	return eachDriverRow(ctx, conn, name, args, 7, func(v []driver.Value) error {
		var k sweepKernel
		var ok [7]bool
		k.id, ok[0] = v[0].(int64)
		k.stream, ok[1] = v[1].(int64)
		k.ts, ok[2] = v[2].(int64)
		k.dur, ok[3] = v[3].(int64)
		k.comp, ok[4] = v[4].(bool)
		k.rank, ok[5] = v[5].(int32)
		k.commKind, ok[6] = v[6].(int8)
		if ok != [7]bool{true, true, true, true, true, true, true} {
			return fmt.Errorf("unexpected row %v", v)
		}
		f(k)
		return nil
	})
}

// eachDriverRow runs the statement name with args written into its text
// and calls row with each row's cols values, read through the driver: the
// sweeps read every GPU event of their runs, and database/sql's Scan of
// each value cost about as much as the sweep itself.
func eachDriverRow(ctx context.Context, conn *sql.Conn, name string, args []any, cols int, row func([]driver.Value) error) error {
	q, rest := inline.Args(stmt(name), args)
	if len(rest) > 0 {
		return fmt.Errorf("arguments not written into the query: %v", rest)
	}
	return conn.Raw(func(dc any) error {
		qc, ok := dc.(driver.QueryerContext)
		if !ok {
			return errors.New("driver connection cannot query")
		}
		rows, err := qc.QueryContext(ctx, q, nil)
		if err != nil {
			return err
		}
		defer rows.Close()
		v := make([]driver.Value, cols)
		for {
			if err := rows.Next(v); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			if err := row(v); err != nil {
				return err
			}
		}
	})
}

// overlapGroups lists the overlap groups of the runs args select, in key
// order, with their sizes.
func overlapGroups(ctx context.Context, conn *sql.Conn, args []any) ([]overlapGroup, error) {
	rows, err := inline.Query(ctx, conn, stmt("overlap_store_groups"), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []overlapGroup
	for rows.Next() {
		var g overlapGroup
		if err := rows.Scan(&g.key, &g.kernels, &g.run, &g.trace, &g.stage, &g.device, &g.single); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}
