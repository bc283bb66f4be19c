package aggregates

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/tracehouse/tracehouse/inline"
)

// batchKernels bounds the GPU events one statement of SaveFusion or
// SaveOverlapRows works on. Below it runs go together, every rank of every
// run in one statement: planning the fuse-pattern query costs about 40 ms
// and setting up its operators about 35 ms whatever the size, most of a
// small rank's time. A run above it is saved rank by rank, one statement
// each, so that memory stays that of one rank.
const batchKernels = 1 << 21

// runRank is one rank of a run with GPU events, and their number.
type runRank struct {
	run, rank, kernels int64
}

// rankStore says how to save per-rank rows of runs: the statements that
// forget and clear a run's copy, insert the rows (run with $runs, or with
// $run and $rank) and record a rank's. args are the insert's other
// arguments, commitArgs the record's besides those recordArgs gives.
type rankStore struct {
	what                        string // for errors: "fuse patterns"
	forget, clear, rows, commit string // statement names
	// saved, when set, is the insert run in place of rows for runs that
	// batchable accepted (a twin that may assume what it says of them)
	saved            string
	args, commitArgs []any
	// batchable, when set, names a statement saying whether the query may
	// take run $run with others; the others are saved rank by rank
	batchable string
	limit     int64 // GPU events per batch; 0 = batchKernels
	// chains, when set, is asked for each rank of more than chainsAbove
	// GPU events for the insert's further arguments (saved alone, rank by
	// rank): the tables of its chain occurrences and keyword hits; every
	// other insert gets unchained. drop then runs before the commit.
	chains      func(ctx context.Context, conn *sql.Conn, r runRank) ([]any, error)
	unchained   []any
	chainsAbove int64
	drop        func(ctx context.Context, conn *sql.Conn) error
}

// save computes and saves the rows of every rank of runs, in one
// transaction per batch (batchKernels).
func (s rankStore) save(ctx context.Context, db *sql.DB, runs []int64) error {
	return s.saveKnown(ctx, db, runs, nil)
}

// saveKnown is save with what a finish's plan knows of runs (their ranks,
// finishPending; what a batchable statement said of them); nil asks the
// warehouse (run_ranks.sql, the batchable statement).
func (s rankStore) saveKnown(ctx context.Context, db *sql.DB, runs []int64, known *finishPlan) error {
	limit := s.limit
	if limit == 0 {
		limit = batchKernels
	}
	return saveInBatches(ctx, db, s.what, s.batchable, runs, known, limit, s.saveBatch, s.alone)
}

// alone reports whether run's ranks (ranks) are saved alone, rank by rank:
// when one of them gets chains.
func (s rankStore) alone(ranks []runRank) bool {
	return s.chains != nil && slices.ContainsFunc(ranks, func(r runRank) bool { return r.kernels > s.chainsAbove })
}

// saveInBatches plans runs into batches (plan) and saves each with save,
// which is told known. A run alone says true of is a batch of its own,
// saved rank by rank.
func saveInBatches(ctx context.Context, db *sql.DB, what, batchable string, runs []int64, known *finishPlan, limit int64,
	save func(context.Context, *sql.DB, batch, *finishPlan) error, alone func([]runRank) bool) error {
	bs, err := plan(ctx, db, batchable, runs, known, limit)
	if err != nil {
		return fmt.Errorf("save %s: %w", what, err)
	}
	if alone != nil {
		bs = apart(bs, alone)
	}
	return saveIsolated(ctx, db, what, bs, known, func(ctx context.Context, db *sql.DB, b batch) error {
		return save(ctx, db, b, known)
	})
}

// apart takes the runs alone says true of out of bs's shared batches,
// each into a batch of its own saved rank by rank.
func apart(bs []batch, alone func([]runRank) bool) []batch {
	var out []batch
	for _, b := range bs {
		if b.perRank {
			out = append(out, b)
			continue
		}
		rest := batch{}
		for _, run := range b.runs {
			var ranks []runRank
			for _, r := range b.ranks {
				if r.run == run {
					ranks = append(ranks, r)
				}
			}
			if alone(ranks) {
				out = append(out, batch{runs: []int64{run}, ranks: ranks, perRank: true, accepted: true})
				continue
			}
			rest.runs = append(rest.runs, run)
			rest.ranks = append(rest.ranks, ranks...)
		}
		if len(rest.runs) > 0 {
			out = append(out, rest)
		}
	}
	return out
}

// plan groups runs into batches (batches) by their ranks' sizes; with
// batchable set, only the runs that statement accepts (someRuns) may share
// a batch. What known holds is not asked again.
func plan(ctx context.Context, db *sql.DB, batchable string, runs []int64, known *finishPlan, limit int64) ([]batch, error) {
	if len(runs) == 0 {
		return nil, nil
	}
	ranks, err := ranksOf(ctx, db, runs, known)
	if err != nil {
		return nil, err
	}
	together := runs
	if batchable != "" {
		if accepted, ok := known.acceptedBy(batchable); ok {
			together = accepted
		} else if together, err = someRuns(ctx, db, batchable, runs); err != nil {
			return nil, err
		}
	}
	return batches(runs, together, ranks, limit), nil
}

// inConnTx runs f in one transaction on one connection of db (a step may
// need the connection itself: an appender joins the connection's
// transaction), rolled back when f or the commit fails; fail gives every
// error its context.
func inConnTx(ctx context.Context, db *sql.DB, fail func(step string, err error) error, f func(*sql.Conn) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fail("", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return fail("begin: ", err)
	}
	if err := f(conn); err != nil {
		_, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return errors.Join(err, rerr)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		// A COMMIT that fails (a full disk) has ended the transaction
		// already; ROLLBACK is for one it never reached, and otherwise
		// only says "no transaction is active", which the one line the
		// user reads must not carry after the disk's own error.
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return fail("commit: ", err)
	}
	return nil
}

// batch is runs saved in one transaction: together (one statement), or a
// single run rank by rank (perRank). Runs together were accepted by the
// store's batchable statement; a run alone was when accepted says so (one
// too large to share).
type batch struct {
	runs     []int64
	ranks    []runRank
	perRank  bool
	accepted bool
}

// batches groups runs (in order) into batches of at most limit GPU events;
// a run over the limit or not in together is a batch of its own, saved per
// rank. A run without GPU events still forgets its old copy.
func batches(runs, together []int64, ranks []runRank, limit int64) []batch {
	byRun := map[int64][]runRank{}
	for _, r := range ranks {
		byRun[r.run] = append(byRun[r.run], r)
	}
	var out []batch
	var cur batch
	var n int64
	for _, run := range runs {
		var size int64
		for _, r := range byRun[run] {
			size += r.kernels
		}
		accepted := slices.Contains(together, run)
		alone := size > limit || !accepted
		if (alone || n+size > limit) && len(cur.runs) > 0 {
			out = append(out, cur)
			cur, n = batch{}, 0
		}
		if alone {
			out = append(out, batch{runs: []int64{run}, ranks: byRun[run], perRank: true, accepted: accepted})
			continue
		}
		cur.runs = append(cur.runs, run)
		cur.ranks = append(cur.ranks, byRun[run]...)
		n += size
	}
	if len(cur.runs) > 0 {
		out = append(out, cur)
	}
	return out
}

// saveBatch saves the rows of b's ranks in one transaction; known is what
// the finish saving them knows (nil outside a finish).
func (s rankStore) saveBatch(ctx context.Context, db *sql.DB, b batch, known *finishPlan) error {
	fail := func(step string, err error) error {
		return fmt.Errorf("save %s of run(s) %v: %s%w", s.what, b.runs, step, err)
	}
	insert := stmt(s.rows)
	if s.saved != "" && (b.accepted || !b.perRank) {
		insert = stmt(s.saved)
	}
	return inConnTx(ctx, db, fail, func(conn *sql.Conn) error {
		// Forget the copies first and record each last, so that even
		// without the transaction a half-written copy could not be read.
		for _, name := range []string{s.forget, s.clear} {
			if _, err := inline.Exec(ctx, conn, stmt(name), runArgs(b.runs)...); err != nil {
				return fail(name+": ", err)
			}
		}
		if b.perRank {
			for _, r := range b.ranks {
				args := append([]any{sql.Named("run", r.run), sql.Named("rank", r.rank), sql.Named("runs", nil)}, s.args...)
				if s.chains != nil && r.kernels > s.chainsAbove {
					known.releaseFreed()
					more, err := s.chains(ctx, conn, r)
					if err != nil {
						return fail(fmt.Sprintf("rank %d: ", r.rank), err)
					}
					args = append(args, more...)
				} else {
					args = append(args, s.unchained...)
				}
				known.releaseFreed()
				if _, err := inline.Exec(ctx, conn, insert, args...); err != nil {
					return fail(fmt.Sprintf("rank %d: ", r.rank), err)
				}
				if s.drop != nil && r.kernels > s.chainsAbove {
					if err := s.drop(ctx, conn); err != nil {
						return fail(fmt.Sprintf("rank %d: ", r.rank), err)
					}
				}
			}
		} else if len(b.ranks) > 0 {
			args := append([]any{sql.Named("run", nil), sql.Named("rank", nil), sql.Named("runs", b.runs)}, s.args...)
			args = append(args, s.unchained...)
			known.releaseFreed()
			if _, err := inline.Exec(ctx, conn, insert, args...); err != nil {
				return fail("", err)
			}
		}
		if len(b.ranks) == 0 {
			return nil
		}
		name, args := recordArgs(s.commit, b)
		now, err := txNow(ctx, conn)
		if err != nil {
			return fail(name+": ", err)
		}
		if _, err := inline.Exec(ctx, conn, stmt(name), append(append(args, now), s.commitArgs...)...); err != nil {
			return fail(name+": ", err)
		}
		return nil
	})
}

// txNow is the $stored_at argument of a record statement: DuckDB's now()
// in conn's transaction, as text. A statement calling now() itself is
// planned again when it runs (its value is the transaction's), which was
// 1-2 ms of each record statement's 2-5 (their fingerprints).
func txNow(ctx context.Context, conn *sql.Conn) (sql.NamedArg, error) {
	var now string
	if err := conn.QueryRowContext(ctx, `SELECT now()::TIMESTAMP::VARCHAR`).Scan(&now); err != nil {
		return sql.NamedArg{}, fmt.Errorf("read the transaction's time: %w", err)
	}
	return sql.Named("stored_at", now), nil
}

// recordArgs picks the record statement for b's ranks and its arguments:
// commit with $run and $ranks for one run, else commit_runs with $runs and
// $ranks side by side. One statement records every rank: a statement per
// rank planned and ran the run's fingerprint again each time (20 small
// runs: 0.3 s of the finish, bench/README.md).
func recordArgs(commit string, b batch) (string, []any) {
	runs, ranks := make([]int64, len(b.ranks)), make([]int64, len(b.ranks))
	for i, r := range b.ranks {
		runs[i], ranks[i] = r.run, r.rank
	}
	if len(b.runs) == 1 {
		return commit, []any{sql.Named("run", b.runs[0]), sql.Named("ranks", ranks)}
	}
	return commit + "_runs", []any{sql.Named("runs", runs), sql.Named("ranks", ranks)}
}

// runStore says how to save a copy kept per run (the per-kernel overlap,
// the step aggregates): statements run in order, each with $run alone or
// with $runs (and $run NULL) for several runs at once, then the record
// statement commit ($run), or commit_runs for several ($runs).
type runStore struct {
	what   string // for errors: "overlap"
	stmts  []string
	commit string
	// fill, when set, runs after stmts on the batch's runs, in the same
	// transaction on one connection, and after runs after it; known is
	// what the finish saving them knows (nil outside a finish)
	fill  func(ctx context.Context, conn *sql.Conn, runs []int64, known *finishPlan) error
	after []string
	// recorded run after the record statement, with stmts' arguments
	recorded []string
	// batchable, when set, names a statement saying whether run $run may
	// go with others; the others are saved alone
	batchable string
	// saved maps a statement of stmts to its twin run in its place for the
	// runs batchable let go together (their saved overlap is current)
	saved map[string]string
}

// save saves the copies of runs, in one transaction per batch of at most
// batchKernels GPU events.
func (s runStore) save(ctx context.Context, db *sql.DB, runs []int64) error {
	return s.saveKnown(ctx, db, runs, nil)
}

// saveKnown is save with what known knows, as rankStore.saveKnown.
func (s runStore) saveKnown(ctx context.Context, db *sql.DB, runs []int64, known *finishPlan) error {
	return saveInBatches(ctx, db, s.what, s.batchable, runs, known, batchKernels, s.saveBatch, nil)
}

// saveOne saves the copy of run alone.
func (s runStore) saveOne(ctx context.Context, db *sql.DB, run int64) error {
	return s.saveBatch(ctx, db, batch{runs: []int64{run}, perRank: true}, nil)
}

// saveBatch saves the copies of b's runs in one transaction: a batch of one
// run passes $run, any other $runs. known is what the finish saving them
// knows (nil outside a finish).
func (s runStore) saveBatch(ctx context.Context, db *sql.DB, b batch, known *finishPlan) error {
	fail := func(step string, err error) error {
		return fmt.Errorf("save %s of run(s) %v: %s%w", s.what, b.runs, step, err)
	}
	args := runArgs(b.runs)
	if s.batchable != "" && !b.perRank {
		// The batchable statement let these runs go together (the step
		// aggregates: their saved overlap is current), so even one run
		// takes the $runs form, which reads that copy (and the saved
		// twins bind only that: s.saved): with $run, DuckDB planned
		// kernel_overlap_cached's branch that computes the overlap too,
		// about 4 ms of each of two statements.
		args = []any{sql.Named("run", nil), sql.Named("runs", b.runs)}
	}
	return inConnTx(ctx, db, fail, func(conn *sql.Conn) error {
		for _, name := range s.stmts {
			known.releaseFreed()
			if twin, ok := s.saved[name]; ok && s.batchable != "" && !b.perRank {
				name = twin
			}
			if _, err := inline.Exec(ctx, conn, stmt(name), args...); err != nil {
				return fail(name+": ", err)
			}
		}
		if s.fill != nil {
			known.releaseFreed()
			if err := s.fill(ctx, conn, b.runs, known); err != nil {
				return fail("", err)
			}
		}
		for _, name := range s.after {
			known.releaseFreed()
			if _, err := inline.Exec(ctx, conn, stmt(name), args...); err != nil {
				return fail(name+": ", err)
			}
		}
		// One record statement for the batch, as recordArgs.
		name, arg := s.commit, sql.Named("run", b.runs[0])
		if len(b.runs) > 1 {
			name, arg = s.commit+"_runs", sql.Named("runs", b.runs)
		}
		now, err := txNow(ctx, conn)
		if err != nil {
			return fail(name+": ", err)
		}
		if _, err := inline.Exec(ctx, conn, stmt(name), arg, now); err != nil {
			return fail(name+": ", err)
		}
		for _, name := range s.recorded {
			if _, err := inline.Exec(ctx, conn, stmt(name), args...); err != nil {
				return fail(name+": ", err)
			}
		}
		return nil
	})
}

// runArgs are the arguments of a statement run for runs: $runs for
// several ($run NULL), $run for one, whose filter then reaches the scans
// (run_id = N).
func runArgs(runs []int64) []any {
	if len(runs) == 1 {
		return []any{sql.Named("run", runs[0]), sql.Named("runs", nil)}
	}
	return []any{sql.Named("run", nil), sql.Named("runs", runs)}
}

// someRuns keeps the runs for which the statement name (with $run) says
// true; several runs are asked in one statement, name_runs (with $runs,
// giving the run ids it keeps): one per run cost 2-3 ms each.
func someRuns(ctx context.Context, db *sql.DB, name string, runs []int64) ([]int64, error) {
	if len(runs) > 1 {
		return someRunsAtOnce(ctx, db, name+"_runs", runs)
	}
	var out []int64
	for _, run := range runs {
		q, args := inline.Args(stmt(name), []any{sql.Named("run", run)})
		var ok bool
		if err := db.QueryRowContext(ctx, q, args...).Scan(&ok); err != nil {
			return nil, fmt.Errorf("%s of run %d: %w", name, run, err)
		}
		if ok {
			out = append(out, run)
		}
	}
	return out, nil
}

// someRunsAtOnce keeps the runs the statement name lists when given $runs,
// in runs' order.
func someRunsAtOnce(ctx context.Context, db inline.Queryer, name string, runs []int64) ([]int64, error) {
	rows, err := inline.Query(ctx, db, stmt(name), sql.Named("runs", runs))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer rows.Close()
	keep := map[int64]bool{}
	for rows.Next() {
		var run int64
		if err := rows.Scan(&run); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		keep[run] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var out []int64
	for _, run := range runs {
		if keep[run] {
			out = append(out, run)
		}
	}
	return out, nil
}

// ranksOf lists the ranks with GPU events of runs: those known holds
// (every rank of at least runs), or asked (runRanks) when known is nil.
func ranksOf(ctx context.Context, db *sql.DB, runs []int64, known *finishPlan) ([]runRank, error) {
	if known == nil {
		return runRanks(ctx, db, runs)
	}
	out := []runRank{}
	for _, r := range known.ranks {
		if slices.Contains(runs, r.run) {
			out = append(out, r)
		}
	}
	return out, nil
}

// runRanks lists the ranks with GPU events of runs (run_ranks.sql).
func runRanks(ctx context.Context, db *sql.DB, runs []int64) ([]runRank, error) {
	rows, err := inline.Query(ctx, db, stmt("run_ranks"), sql.Named("runs", runs))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []runRank
	for rows.Next() {
		var r runRank
		if err := rows.Scan(&r.run, &r.rank, &r.kernels); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
