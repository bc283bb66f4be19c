package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
)

// Steps are found while a trace is ingested (insert_steps.sql and
// link_steps.sql, inside its transaction); their per-step aggregates need
// the run's saved overlap, so Finish saves them after it (SaveSteps).

// SaveSteps computes run's per-step aggregates once and saves them in
// step_kernel_store and step_total_store, so that compare and history read
// a few rows per step instead of the run's events. Calling it again
// replaces the copy; reports ignore a copy whose run changed since.
func SaveSteps(ctx context.Context, db *sql.DB, run int64) error {
	return stepStore().saveOne(ctx, db, run)
}

// KernelSource is the steps.source of steps found by --steps-by.
const KernelSource = "kernel"

// CheckStepsBy validates a --steps-by pattern (RE2, as DuckDB matches it).
func CheckStepsBy(pattern string) error {
	if pattern == "" {
		return nil
	}
	if _, err := regexp.Compile(pattern); err != nil {
		return fmt.Errorf("--steps-by %q: %w", pattern, err)
	}
	return nil
}

// StepsCurrent says whether run's stored steps are the ones stepsBy asks
// for: found by that kernel pattern, or ("" ) from annotations.
func StepsCurrent(ctx context.Context, db *sql.DB, run int64, stepsBy string) (bool, error) {
	traces, err := runTraces(ctx, db, run)
	if err != nil {
		return false, err
	}
	for _, t := range traces {
		if !t.matches(stepsBy) {
			return false, nil
		}
	}
	return true, nil
}

// StepsStale lists the runs of runs (in their order) whose stored steps
// are not the ones stepsBy asks for (StepsCurrent, for many runs in one
// query): those RecomputeSteps has to redo.
func StepsStale(ctx context.Context, db *sql.DB, runs []int64, stepsBy string) ([]int64, error) {
	if runs == nil {
		runs = []int64{}
	}
	rows, err := db.QueryContext(ctx, stmt("runs_traces"), sql.Named("runs", runs))
	if err != nil {
		return nil, fmt.Errorf("read the traces of %d runs: %w", len(runs), err)
	}
	defer rows.Close()
	stale := map[int64]bool{}
	for rows.Next() {
		var run int64
		var t traceSteps
		if err := rows.Scan(&run, &t.id, &t.source, &t.name); err != nil {
			return nil, fmt.Errorf("read the traces of %d runs: %w", len(runs), err)
		}
		if !t.matches(stepsBy) {
			stale[run] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the traces of %d runs: %w", len(runs), err)
	}
	var out []int64
	for _, r := range runs {
		if stale[r] {
			out = append(out, r)
			delete(stale, r)
		}
	}
	return out, nil
}

type traceSteps struct {
	id           int64
	source, name string
}

func (t traceSteps) matches(stepsBy string) bool {
	if stepsBy == "" {
		return t.source != "" && t.source != KernelSource
	}
	return t.source == KernelSource && t.name == stepsBy
}

func runTraces(ctx context.Context, db *sql.DB, run int64) ([]traceSteps, error) {
	rows, err := queryNamed(ctx, db, stmt("run_traces"), sql.Named("run", run))
	if err != nil {
		return nil, fmt.Errorf("read traces of run %d: %w", run, err)
	}
	defer rows.Close()
	var out []traceSteps
	for rows.Next() {
		var t traceSteps
		if err := rows.Scan(&t.id, &t.source, &t.name); err != nil {
			return nil, fmt.Errorf("read traces of run %d: %w", run, err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RecomputeSteps finds the steps of every trace of run again, by the kernel
// pattern stepsBy (--steps-by) or, when it is "", from annotations, unless
// they are stored that way already; then saves the run's step aggregates.
// Each trace is redone in one transaction.
func RecomputeSteps(ctx context.Context, db *sql.DB, run int64, stepsBy string) error {
	if err := CheckStepsBy(stepsBy); err != nil {
		return err
	}
	traces, err := runTraces(ctx, db, run)
	if err != nil {
		return err
	}
	var by any
	if stepsBy != "" {
		by = stepsBy
	}
	changed := false
	for _, t := range traces {
		if t.matches(stepsBy) {
			continue
		}
		changed = true
		if err := redoSteps(ctx, db, t.id, by); err != nil {
			return err
		}
	}
	if !changed {
		return nil
	}
	return SaveSteps(ctx, db, run)
}

func redoSteps(ctx context.Context, db *sql.DB, trace int64, by any) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("find steps of trace %d: %w", trace, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	for _, q := range []struct {
		name string
		args []any
	}{
		{"steps_clear", []any{sql.Named("trace", trace)}},
		{"insert_steps", []any{sql.Named("trace", trace), sql.Named("steps_by", by)}},
		{"link_steps", []any{sql.Named("trace", trace)}},
	} {
		if _, err := execNamed(ctx, tx, stmt(q.name), q.args...); err != nil {
			return fmt.Errorf("find steps of trace %d: %s: %w", trace, q.name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("find steps of trace %d: commit: %w", trace, err)
	}
	return nil
}
