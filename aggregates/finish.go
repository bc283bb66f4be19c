package aggregates

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/inline"
	"github.com/tracehouse/tracehouse/schema"
)

// DuckDBFinishMiB is DuckDB's memory_limit while a finish saves runs'
// copies (overlap, steps, fuse-pattern and overlap-table rows) on a file
// warehouse. Unbounded, DuckDB kept every operator of those statements in
// memory, which grew with the kernels of a run (issue 38: 5 M kernels
// peaked at 5 GB). Bounded, its sorts, windows, joins and aggregates spill
// to the warehouse's temporary directory (<file>.tmp): a 262 MB trace of
// 420 k kernels, 0.84 M events, peaked at 470 MiB in the finish, 369 MiB
// bounded, for 16.2 -> 17.2 CPU-s (bench/README.md, "Finish bounded").
// Should a save still not fit, the bound is lifted and that save made again
// (ingest.FinishBound.Lift), so a bound never fails a finish that would
// have passed; a context given WithNotice hears of it.
const DuckDBFinishMiB = 200

// Finish completes what reports need after an ingest: the catalog
// installed, then, for every run whose copy is missing or older than one
// of its traces, its per-kernel overlap and step aggregates (as
// FinishPerRun), and each rank's fuse-pattern rows (SaveFusion), which
// compare reads instead of matching both runs' kernels again, and
// overlap-opportunity rows for the verdict floor minDurNS
// (SaveOverlapRows), which a triage of one rank reads. It works from what
// the warehouse holds, so running it again finishes an interrupted job.
// `ingest`, `triage PATH`, `compare PATH` and `capture` end with it
// (target.Finish).
//
// After the catalog the saves run side by side, each in its own
// transaction on its own connection (they write different tables): the
// fuse-pattern rows beside the overlap, then the step aggregates beside the
// overlap rows, both of which read the saved overlap. On a small run each
// save is mostly DuckDB planning its statements on one thread, so one save
// alone left the other core idle (0.6 MB trace: 110 -> 81-99 ms; 270 MB:
// 580 -> 460-540 ms, for about 35 MiB more at the peak). When the runs
// due hold more than sideBySideKernels GPU events, the fuse-pattern rows
// and the overlap are saved one after the other instead, then the step
// aggregates beside the overlap rows: the first two side by side stacked
// their memory (issue 38: 250 MB of tiny events, 202 k GPU events, peaked
// at 405 MiB side by side, 335 one after another; the 1 GB kernel-dense
// trace's overlap ran out of the finish's bound beside the fuse-pattern
// rows and, made again unbounded, peaked at 551-881 MiB), where the last
// two kept the peak of the saves one after another (whole ingest, 1 GB
// kernel-dense: 369-377 MiB against 361-395; 1 GB of tiny events 330-350
// against 341-355) and save the overlap rows' wall time where a second
// core is free (bench/README.md, "Twenty-eighth figures").
//
// A run whose copy cannot be saved fails alone (as in FinishPerRun): the
// saves go on for the other runs and copies, and Finish returns a
// *FinishError naming each failed run and copy. On a file warehouse
// DuckDB's memory is bounded meanwhile (ingest.BoundFinish) when the runs
// due hold more than SmallRunEvents GPU events, and on a
// machine of 2 cores DuckDB starts no worker thread beside the saves'
// own (ingest.CallersOnly, finishSettings).
func Finish(ctx context.Context, db *sql.DB, cat *catalog.Catalog, minDurNS int64) error {
	return finish(ctx, db, cat, minDurNS, sideBySideKernels)
}

// finish is Finish running its saves side by side up to sideBySide GPU
// events due.
func finish(ctx context.Context, db *sql.DB, cat *catalog.Catalog, minDurNS, sideBySide int64) error {
	if err := FinishCatalog(ctx, db, cat); err != nil {
		return err
	}
	todo, restore, err := finishSettings(ctx, db)
	if err != nil {
		return err
	}
	due := todo.kernelsDue()
	todo.release = due > sideBySide
	stopReleasing := todo.releaseFreedWhile()
	defer stopReleasing()
	// A run's failure must not cancel the other saves (errgroup cancels on
	// an error): it is set aside and joined at the end.
	var mu sync.Mutex
	var failed []error
	alone := func(err error) error {
		var fe *FinishError
		if errors.As(err, &fe) {
			mu.Lock()
			defer mu.Unlock()
			failed = append(failed, err)
			return nil
		}
		return err
	}
	ctx = Announce(ctx, PhaseSaving)
	fusion := func(ctx context.Context) error {
		if len(todo.fusion) == 0 {
			return nil
		}
		phase(ctx, PhaseFusion)
		return alone(fusionStore().saveKnown(ctx, db, todo.fusion, &todo))
	}
	// overlap saves the per-kernel overlap, then the step aggregates beside
	// the overlap rows (both read it).
	overlap := func(ctx context.Context) error {
		if len(todo.overlap) > 0 {
			phase(ctx, PhaseOverlap)
		}
		saved := overlapStore().saveKnown(ctx, db, todo.overlap, &todo)
		var failedRuns []int64
		if fe := (*FinishError)(nil); errors.As(saved, &fe) {
			for _, f := range fe.Failures {
				failedRuns = append(failedRuns, f.Run)
			}
		}
		if err := alone(saved); err != nil {
			return err
		}
		// Whether each run's overlap is now current decides, for both
		// saves below, which runs may go together: asked once for both
		// (the fuse-pattern save beside this one reads its own copy). A
		// run whose overlap this finish just saved is current (its record
		// holds the fingerprint of what was saved, and the finish holds
		// the warehouse), so only the others are asked: after an ingest,
		// none (overlap_store_current, about 1.7 ms).
		after := todo
		if both := union(todo.steps, todo.rows); len(both) > 0 {
			var swept, ask []int64
			for _, r := range both {
				if slices.Contains(todo.overlap, r) && !slices.Contains(failedRuns, r) {
					swept = append(swept, r)
				} else {
					ask = append(ask, r)
				}
			}
			current := slices.Clone(swept)
			if len(ask) > 0 {
				more, err := someRuns(ctx, db, currentOverlap, ask)
				if err != nil {
					return fmt.Errorf("find runs whose saved overlap is current: %w", err)
				}
				current = append(current, more...)
			}
			after.accepted = map[string][]int64{currentOverlap: current}
			after.swept = swept
		}
		h, hctx := errgroup.WithContext(ctx)
		h.Go(func() error {
			if len(todo.steps) > 0 {
				phase(hctx, PhaseSteps)
			}
			return alone(stepStore().saveKnown(hctx, db, after.steps, &after))
		})
		h.Go(func() error {
			if len(todo.rows) == 0 {
				return nil
			}
			phase(hctx, PhaseOverlapRows)
			return alone(overlapRowsStore(minDurNS).saveKnown(hctx, db, after.rows, &after))
		})
		return h.Wait()
	}
	if due > sideBySide {
		if err = fusion(ctx); err == nil {
			err = overlap(ctx)
		}
	} else {
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() error { return fusion(gctx) })
		g.Go(func() error { return overlap(gctx) })
		err = g.Wait()
	}
	return JoinFinishErrors(append(failed, err, restore())...)
}

// releaseFreed hands DuckDB's freed pages back to the kernel
// (schema.ReleaseFreedPages) when p is a large finish's (release). The saves of a
// large run are one statement after another under the 200 MiB bound, each
// building and dropping hash tables and aggregate states of every kernel;
// the pages one statement freed stayed resident while the next one grew
// (jemalloc purges them a share at a time as later allocations go by): at
// the 1 GB kernel-dense trace the step save began at 372-430 MiB resident
// with 25 MiB allocated, and its statements peaked at 436-483 MiB; with the
// purge, at 389-395 (bench/README.md, "Twenty-first figures"). A small
// run's statements free little, and the purge's page faults would only
// cost time, so a small finish keeps jemalloc's decay.
func (p *finishPlan) releaseFreed() {
	if p != nil && p.release {
		schema.ReleaseFreedPages()
	}
}

// releaseFreedWhile hands DuckDB's freed pages back to the kernel every
// releaseEvery until stop, when p is a large finish's. releaseFreed
// before each statement does not reach the pages a statement frees while
// it runs, nor those the save beside it frees: they stayed resident up to
// jemalloc's 1 s decay while the next operator grew. At the 1 GB
// kernel-dense trace the finish's peak was DuckDB's 200 MiB bound, about
// 30 MiB of its allocations outside it, 25 MiB of Go heap, 54 MiB of the
// binary's text, and 50-210 MiB of such freed pages; the last is what
// moved the whole ingest's peak between 363 and 441 MiB (bench/README.md,
// "Thirty-second figures").
func (p *finishPlan) releaseFreedWhile() (stop func()) {
	if !p.release {
		return func() {}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(releaseEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				schema.ReleaseFreedPages()
			}
		}
	}()
	return func() { close(done); <-stopped }
}

const releaseEvery = 100 * time.Millisecond

// sideBySideKernels is the most GPU events the runs due may hold for
// Finish to run its saves side by side (the 270 MB SGLang trace has 85 k).
const sideBySideKernels = 1 << 17

// finishPlan is what a finish saves: the runs whose copy of each store is
// due, in run order, and the ranks with GPU events of all of them; and
// what its saves are told of the finish (they get it as known, nil outside
// a finish).
type finishPlan struct {
	overlap, fusion, steps, rows []int64
	ranks                        []runRank // never nil
	// accepted holds, by statement, the runs a batchable statement
	// (rankStore.batchable) accepted when asked for several stores at once
	accepted map[string][]int64
	// release says the runs due hold more than sideBySideKernels GPU
	// events: the saves hand the pages DuckDB has freed back to the kernel
	// before each large statement (releaseFreed)
	release bool
	// swept holds the runs whose overlap this finish saved (due, saved
	// without failing, current after), for the step save: their sweep's
	// communication rows and its record (comm_swept_commit) were written in
	// the same transaction as the overlap, so comm_swept_current would find
	// each of them current (commUnswept)
	swept []int64
	// bound is DuckDB's memory bound over the saves (nil: none), lifted
	// by a save that runs out of memory under it (saveIsolated)
	bound *ingest.FinishBound
}

// liftBound says whether a save that failed with err should be made again
// (ingest.FinishBound.Lift); false when p is nil or holds no bound.
func (p *finishPlan) liftBound(ctx context.Context, err error) bool {
	return p != nil && p.bound.Lift(ctx, err)
}

// acceptedBy is what p holds of the runs the batchable statement name
// accepted; false when it was not asked (or p is nil).
func (p *finishPlan) acceptedBy(name string) ([]int64, bool) {
	if p == nil {
		return nil, false
	}
	runs, ok := p.accepted[name]
	return runs, ok
}

// finishPending asks, in one query (finish_pending.sql, the one definition
// of a copy being due), which copies of which runs are due and those runs'
// ranks: a pending query per store, one of them twice, and a ranks query
// per store were ten statements of about 1 ms each. The saves write only
// their own records, so what is due does not change while the finish
// runs.
func finishPending(ctx context.Context, db *sql.DB) (finishPlan, error) {
	p := finishPlan{ranks: []runRank{}}
	rows, err := inline.Query(ctx, db, stmt("finish_pending"), sql.Named("max_attempts", FinishAttempts))
	if err != nil {
		return p, fmt.Errorf("find runs without saved copies: %w", err)
	}
	defer rows.Close()
	last := int64(-1)
	for rows.Next() {
		var run int64
		var overlap, fusion, steps, overlapRows bool
		var rank, kernels sql.NullInt64
		if err := rows.Scan(&run, &overlap, &fusion, &steps, &overlapRows, &rank, &kernels); err != nil {
			return p, fmt.Errorf("find runs without saved copies: %w", err)
		}
		if run != last {
			last = run
			for _, d := range []struct {
				due  bool
				runs *[]int64
			}{{overlap, &p.overlap}, {fusion, &p.fusion}, {steps, &p.steps}, {overlapRows, &p.rows}} {
				if d.due {
					*d.runs = append(*d.runs, run)
				}
			}
		}
		if rank.Valid {
			p.ranks = append(p.ranks, runRank{run: run, rank: rank.Int64, kernels: kernels.Int64})
		}
	}
	if err := rows.Err(); err != nil {
		return p, fmt.Errorf("find runs without saved copies: %w", err)
	}
	return p, nil
}

// currentOverlap is the batchable statement of the step aggregates and
// the overlap rows: whether a run's saved overlap is current.
const currentOverlap = "overlap_store_current"

// union is a's runs, then b's not in a.
func union(a, b []int64) []int64 {
	out := slices.Clone(a)
	for _, r := range b {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// SmallRunEvents is the most GPU events of the runs due for which a
// finish leaves DuckDB's memory unbounded (DuckDBFinishMiB) and plans
// without the large-input optimizers (schema.SmallPlans), and of the runs a
// report reads for which it does the latter too (target.SmallPlans): their
// saves hold a few tens of MiB in DuckDB, and each change of its
// memory_limit made it hand every freed page back to the kernel (jemalloc
// purged), which the statements after it faulted in again.
const SmallRunEvents = 1 << 15

// kernels counts the GPU events of every run with a copy due.
func (p finishPlan) kernels() int64 {
	var n int64
	for _, r := range p.ranks {
		n += r.kernels
	}
	return n
}

// kernelsDue counts the GPU events of the runs whose saved overlap is due:
// the runs an ingest just stored, whose every copy is due with it.
func (p finishPlan) kernelsDue() int64 {
	var n int64
	for _, r := range p.ranks {
		if slices.Contains(p.overlap, r.run) {
			n += r.kernels
		}
	}
	return n
}

// FinishPerRun completes what reports need after an ingest, but the
// per-rank rows: the catalog they match fuse patterns against, and the
// saved per-kernel overlap and per-step aggregates of every run whose copy
// is missing or older than one of its traces (Finish also saves the
// fuse-pattern and overlap-opportunity rows). It works from what the
// warehouse holds, not from one ingest's result, so after an interrupted
// ingest (or a crash between a trace's commit and this step) running it
// again finishes the job. A lake's ingest ends with it.
//
// A run whose copy cannot be saved (DuckDB out of memory, say) fails alone:
// the others are saved, the failure is recorded (finish_failures) so that
// later finishes leave that run alone until one of its traces changes, and
// FinishPerRun returns a *FinishError naming it.
//
// DuckDB is set up as for Finish meanwhile (finishSettings).
func FinishPerRun(ctx context.Context, db *sql.DB, cat *catalog.Catalog) error {
	if err := FinishCatalog(ctx, db, cat); err != nil {
		return err
	}
	todo, restore, err := finishSettings(ctx, db)
	if err != nil {
		return err
	}
	err = saveOverlapOf(ctx, db, &todo)
	var fe *FinishError
	if err == nil || errors.As(err, &fe) {
		err = JoinFinishErrors(err, saveStepsOf(ctx, db, &todo))
	}
	return JoinFinishErrors(err, restore())
}

// finishSettings sets DuckDB up for a finish's saves until restore, and
// returns what is due (finishPending): its memory bounded on a file
// warehouse (ingest.BoundFinish) when the runs due hold more than
// SmallRunEvents GPU events, and no worker threads beside
// the saves' own on a small machine (ingest.CallersOnly), whatever the
// runs' size. With a worker, DuckDB's calling thread spun while the worker
// held a statement's last tasks: in the one-after-another saves of a large
// run, about 14% of the finish's CPU went to that polling (perf: the
// executor's task loop and its locks), which on 2 cores also took a core
// from everything else. Callers only, the finish of the 1 GB tiny-events
// trace took 8.9-9.1 CPU-s against 10.9-12.0, the kernel-dense one's
// 18.1-21.0 against 21.6-21.9 (bench/README.md, "Twenty-fifth figures").
// Up to SmallRunEvents GPU events due, DuckDB's optimizers that pay
// only on large inputs are off meanwhile too (schema.SmallPlans).
func finishSettings(ctx context.Context, db *sql.DB) (todo finishPlan, restore func() error, _ error) {
	return finishSettingsAbove(ctx, db, SmallRunEvents, DuckDBFinishMiB)
}

// finishSettingsAbove is finishSettings bounding DuckDB's memory to
// limitMiB above unbounded GPU events due (tests make both small). A
// bound DuckDB is already over goes unset, which is said (WithNotice),
// as a bound lifted during the finish is.
func finishSettingsAbove(ctx context.Context, db *sql.DB, unbounded int64, limitMiB int) (todo finishPlan, restore func() error, _ error) {
	todo, err := finishPending(ctx, db)
	if err != nil {
		return todo, nil, err
	}
	if todo.kernels() > unbounded {
		var held bool
		if todo.bound, held, err = ingest.BoundFinish(ctx, db, limitMiB); err != nil {
			return todo, nil, err
		}
		if held {
			notice(ctx, fmt.Sprintf("the aggregates are saved without the finish's %d MiB memory bound: "+
				"DuckDB already held more and could not free it, so the finish may take more memory", limitMiB))
		}
	}
	callers, err := ingest.CallersOnly(ctx, db)
	if err != nil {
		return todo, nil, JoinFinishErrors(err, todo.bound.Restore(ctx))
	}
	small := func() error { return nil }
	if todo.kernels() <= unbounded {
		if small, err = schema.SmallPlans(ctx, db); err != nil {
			return todo, nil, JoinFinishErrors(err, callers(), todo.bound.Restore(ctx))
		}
	}
	return todo, func() error { return errors.Join(small(), callers(), todo.bound.Restore(ctx)) }, nil
}

// FinishCatalog is a finish's first step: the catalog installed (reported as
// PhaseCatalog).
func FinishCatalog(ctx context.Context, db *sql.DB, cat *catalog.Catalog) error {
	phase(ctx, PhaseCatalog)
	return ingest.InstallCatalog(ctx, db, cat)
}

// saveOverlapOf is FinishPerRun's second step: the per-kernel overlap
// saved (SaveOverlap) for the runs whose copy is due (todo.overlap).
func saveOverlapOf(ctx context.Context, db *sql.DB, todo *finishPlan) error {
	if len(todo.overlap) > 0 {
		phase(ctx, PhaseOverlap)
	}
	return overlapStore().saveKnown(ctx, db, todo.overlap, todo)
}

// saveStepsOf is FinishPerRun's last step: the step aggregates saved for
// the runs whose copy is due (todo.steps). They read the saved overlap, so
// it comes after saveOverlapOf.
func saveStepsOf(ctx context.Context, db *sql.DB, todo *finishPlan) error {
	if len(todo.steps) > 0 {
		phase(ctx, PhaseSteps)
	}
	return stepStore().saveKnown(ctx, db, todo.steps, todo)
}

// pendingRuns runs a pending query (triage_pending.sql): run ids, one per
// row. A run whose save failed FinishAttempts times for its current traces
// is not pending. args are the query's other parameters.
func pendingRuns(ctx context.Context, db *sql.DB, name string, args ...any) ([]int64, error) {
	rows, err := inline.Query(ctx, db, stmt(name), append([]any{sql.Named("max_attempts", FinishAttempts)}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		runs = append(runs, id)
	}
	return runs, rows.Err()
}

// SaveOverlap computes run's per-kernel overlap once (sweepOverlap) and
// saves it in kernel_overlap_store, so that reports read it instead of
// sorting the run's kernels again (about 2 CPU-seconds per million kernels
// in SQL), and its
// per-device busy time (device_busy_store) summed from it. Calling it
// again replaces the copy. Reports ignore the copy, and compute, as soon as
// the run's kernels or their names' categories change, so a stale copy is
// never read.
func SaveOverlap(ctx context.Context, db *sql.DB, run int64) error {
	return overlapStore().saveOne(ctx, db, run)
}

// overlapStore saves per-kernel overlap: forget the copy first and record
// it last, so that even without the transaction a half-written copy could
// not be read. The sweep also saves the communication overlap rows
// (comm_overlap_store, read under the step aggregates' record), and
// records that it did (comm_overlap_runs) for the step aggregates' save.
func overlapStore() runStore {
	return runStore{what: "overlap",
		stmts: []string{"overlap_store_forget", "comm_swept_forget", "overlap_store_clear", "overlap_store_clear_busy",
			"comm_store_clear"},
		fill: func(ctx context.Context, conn *sql.Conn, runs []int64, _ *finishPlan) error {
			return sweepOverlap(ctx, conn, runs)
		},
		after:  []string{"overlap_store_busy"},
		commit: "overlap_store_commit", recorded: []string{"comm_swept_commit"}}
}

// stepStore saves step aggregates, and the idle rows per step
// (sqllib/idle.sql), the comm-comp overlap per device (sqllib/comm.sql),
// the launch overhead and the duration spread per rank (sqllib/launch.sql,
// spread.sql) that the same record guards; in a batch they read the runs'
// saved overlap, so only runs whose copy is current go together. The
// comm-comp overlap rows the overlap's sweep saved are kept (commUnswept);
// the idle rows are swept in Go (saveIdle).
func stepStore() runStore {
	return runStore{what: "steps",
		stmts: []string{"step_store_forget", "step_store_clear_kernels", "step_store_clear_totals",
			"idle_store_clear_steps", "idle_store_clear_gaps",
			"launch_store_clear_kernels", "launch_store_clear_stages", "spread_store_clear",
			"step_store_kernels", "step_store_totals",
			"launch_store_kernels", "launch_store_stages", "spread_store_rows"},
		fill:   stepsFill,
		commit: "step_store_commit", batchable: currentOverlap,
		saved: map[string]string{"step_store_kernels": "step_store_kernels_saved", "step_store_totals": "step_store_totals_saved"}}
}

// stepsFill is the step save's work besides its plain statements: the
// comm-comp overlap rows the sweep did not save (commUnswept), and the
// idle rows (saveIdle).
func stepsFill(ctx context.Context, conn *sql.Conn, runs []int64, known *finishPlan) error {
	var swept []int64
	if known != nil {
		swept = known.swept
	}
	if err := commUnswept(ctx, conn, runs, swept); err != nil {
		return err
	}
	known.releaseFreed()
	return saveIdle(ctx, conn, runs)
}

// saveIdleSQL saves the idle rows of runs as the SQL library computes
// them, per step (idle_store_steps.sql) and the longest gaps
// (idle_store_gaps.sql), inside the step save's transaction on conn: what
// saveIdle falls back on when a step is too large for its sweep in Go.
// Each statement computes the runs' gaps again (_idle_gaps_for), which
// only such rare runs pay.
func saveIdleSQL(ctx context.Context, conn *sql.Conn, runs []int64) error {
	for _, name := range []string{"idle_store_steps", "idle_store_gaps"} {
		if _, err := inline.Exec(ctx, conn, stmt(name), runArgs(runs)...); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// commUnswept computes into comm_overlap_store the communication overlap
// rows of runs that the overlap's sweep
// did not save for their current events (comm_swept_current.sql: a copy
// saved before migration 0024, or before the events changed, or by a
// finish whose overlap save failed), by the SQL library, and forgets those
// runs' sweep record; the others' rows are kept as swept. swept are the
// runs whose overlap the finish calling it saved (finishPlan.swept), which
// are not asked.
func commUnswept(ctx context.Context, conn *sql.Conn, runs, swept []int64) error {
	if !slices.ContainsFunc(runs, func(r int64) bool { return !slices.Contains(swept, r) }) {
		return nil // every run's sweep was recorded by this finish
	}
	current, err := someRunsAtOnce(ctx, conn, "comm_swept_current", runs)
	if err != nil {
		return err
	}
	var stale []int64
	for _, r := range runs {
		if !slices.Contains(current, r) {
			stale = append(stale, r)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	for _, name := range []string{"comm_swept_forget", "comm_store_clear", "comm_store_rows"} {
		if _, err := inline.Exec(ctx, conn, stmt(name), runArgs(stale)...); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}
