package aggregates

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/tracehouse/tracehouse/inline"
)

// FinishAttempts bounds the saves of one copy of one run (for the same
// traces) that may fail: the first, made by the ingest that stored the
// run, and the next finishes' retries, which cover a cause that passes (a
// full disk, memory taken by something else). After that the run is left
// alone until one of its traces changes: a cause that stays (a run too
// large for the memory, a value out of range) would otherwise cost every
// later ingest the failing save, and fail it.
const FinishAttempts = 3

// FinishFailure is one run whose saved copy (Store: "overlap", "steps",
// "fuse patterns" or "overlap rows") could not be made, for the
// Attempts-th time. Its traces are stored and stay; readers compute what
// the copy would have held, as for any run without a current copy.
type FinishFailure struct {
	Run      int64
	Label    string
	Store    string
	Attempts int
	Err      error
}

func (f FinishFailure) Error() string {
	next := "a later ingest tries again; reports compute it meanwhile"
	if f.Attempts >= FinishAttempts {
		next = "not tried again until the run changes; reports compute it"
	}
	return fmt.Sprintf("run %s is stored, but saving its %s failed (attempt %d of %d: %s): %v",
		f.Label, f.Store, f.Attempts, FinishAttempts, next, f.Err)
}

// FinishError is a finish that could not save some runs' copies. Each
// failure is recorded (finish_failures), every other run and copy was
// saved, and later finishes succeed: they try a failed copy again at most
// FinishAttempts times in all.
type FinishError struct {
	Failures []FinishFailure
}

func (e *FinishError) Error() string {
	msgs := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		msgs[i] = f.Error()
	}
	return strings.Join(msgs, "\n")
}

// JoinFinishErrors merges the FinishErrors among errs into one; any other
// error wins (it is returned, the failures joined to it).
func JoinFinishErrors(errs ...error) error {
	var fe FinishError
	var other []error
	for _, err := range errs {
		var e *FinishError
		switch {
		case err == nil:
		case errors.As(err, &e):
			fe.Failures = append(fe.Failures, e.Failures...)
		default:
			other = append(other, err)
		}
	}
	if len(other) > 0 {
		if len(fe.Failures) > 0 {
			other = append(other, &fe)
		}
		return errors.Join(other...)
	}
	if len(fe.Failures) > 0 {
		return &fe
	}
	return nil
}

// saveIsolated saves the batches bs with save, keeping a run's failure its
// own: a batch of several runs that fails is saved again run by run (each
// rank alone, the least memory), and a run that still fails is recorded
// (recordFailure) and reported in the returned *FinishError while the
// others are saved. An interruption (ctx done) is no run's failure: it is
// returned as it is, as is a failure to record one. known is the plan of
// the finish saving them (nil outside one), whose memory bound a batch
// that runs out of it lifts.
func saveIsolated(ctx context.Context, db *sql.DB, store string, bs []batch, known *finishPlan,
	save func(context.Context, *sql.DB, batch) error) error {
	var failed []FinishFailure
	var one func(b batch) error
	one = func(b batch) error {
		err := save(ctx, db, b)
		if err == nil || ctx.Err() != nil {
			return err
		}
		// Out of memory under the finish's bound: the bound goes (for the
		// rest of the finish) and the batch is saved again, which is said
		// (WithNotice): unbounded, a finish peaked at 586-599 MiB where it
		// took 370 bounded, and nothing showed why (bench/README.md,
		// "Twenty-fifth figures").
		if known.liftBound(ctx, err) {
			notice(ctx, fmt.Sprintf("saving the %s of run(s) %s ran out of the finish's memory bound "+
				"and was made again without it, which may take more memory: %s", store, runLabels(ctx, db, b.runs), firstLine(err)))
			if err = save(ctx, db, b); err == nil || ctx.Err() != nil {
				return err
			}
		}
		if len(b.runs) > 1 {
			before := len(failed)
			for _, run := range b.runs {
				alone := batch{runs: []int64{run}, perRank: true}
				for _, r := range b.ranks {
					if r.run == run {
						alone.ranks = append(alone.ranks, r)
					}
				}
				if err := one(alone); err != nil {
					return err
				}
			}
			// Every run saved alone: nothing but the batch explains the
			// error, so it is said; silent, a batch that can never be
			// saved would only cost each finish its time twice.
			if len(failed) == before {
				notice(ctx, fmt.Sprintf("saving the %s of runs %s together failed, so each was saved alone "+
					"(the same rows, more time): %s", store, runLabels(ctx, db, b.runs), firstLine(err)))
			}
			return nil
		}
		f, rerr := recordFailure(ctx, db, store, b.runs[0], err)
		if rerr != nil {
			return errors.Join(err, rerr)
		}
		failed = append(failed, f)
		return nil
	}
	for _, b := range bs {
		if err := one(b); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return &FinishError{Failures: failed}
	}
	return nil
}

// recordFailure remembers in finish_failures that saving store of run
// failed with err, in a statement of its own (the save's transaction was
// rolled back), and names the run.
func recordFailure(ctx context.Context, db *sql.DB, store string, run int64, err error) (FinishFailure, error) {
	f := FinishFailure{Run: run, Label: fmt.Sprint(run), Store: store, Err: err}
	rows, rerr := inline.Query(ctx, db, stmt("finish_failure_record"),
		sql.Named("run", run), sql.Named("store", store), sql.Named("error", err.Error()))
	if rerr == nil {
		for rows.Next() {
			rerr = rows.Scan(&f.Attempts)
		}
		rerr = errors.Join(rerr, rows.Err(), rows.Close())
	}
	if rerr != nil {
		return f, fmt.Errorf("record that saving the %s of run %d failed: %w", store, run, rerr)
	}
	f.Label = runLabel(ctx, db, run)
	return f, nil
}

// runLabel is run's label, or its id where the label cannot be read.
func runLabel(ctx context.Context, db *sql.DB, run int64) string {
	var label string
	if err := db.QueryRowContext(ctx, `SELECT label FROM runs WHERE run_id = ?`, run).Scan(&label); err != nil {
		return fmt.Sprint(run)
	}
	return label
}

type noticeKey struct{}

// WithNotice returns ctx carrying notice, which hears one line for each
// save of a finish that ran out of the finish's memory bound and was made
// again without it (finishPlan.liftBound): the copies are the same, but
// the finish may take more memory than its bound says; and one for each
// batch of several runs that failed while each of its runs then saved
// alone (saveIsolated).
func WithNotice(ctx context.Context, notice func(string)) context.Context {
	return context.WithValue(ctx, noticeKey{}, notice)
}

// notice tells ctx's notice function, if any, msg.
func notice(ctx context.Context, msg string) {
	if f, ok := ctx.Value(noticeKey{}).(func(string)); ok && f != nil {
		f(msg)
	}
}

// runLabels names runs by their labels for a notice (runLabel).
func runLabels(ctx context.Context, db *sql.DB, runs []int64) string {
	names := make([]string, len(runs))
	for i, run := range runs {
		names[i] = runLabel(ctx, db, run)
	}
	return strings.Join(names, ", ")
}

// firstLine is err's first line (DuckDB's errors carry more).
func firstLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}
