package aggregates

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/inline"
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
	out, _, err := staleSteps(ctx, db, runs, stepsBy)
	return out, err
}

// staleSteps is StepsStale, with the traces whose steps are not the ones
// stepsBy asks for, by trace_id.
func staleSteps(ctx context.Context, q inline.Queryer, runs []int64, stepsBy string) ([]int64, []int64, error) {
	if runs == nil {
		runs = []int64{}
	}
	rows, err := q.QueryContext(ctx, stmt("runs_traces"), sql.Named("runs", runs))
	if err != nil {
		return nil, nil, fmt.Errorf("read the traces of %d runs: %w", len(runs), err)
	}
	defer rows.Close()
	stale := map[int64]bool{}
	var traces []int64
	for rows.Next() {
		var run int64
		var t traceSteps
		if err := rows.Scan(&run, &t.id, &t.source, &t.name); err != nil {
			return nil, nil, fmt.Errorf("read the traces of %d runs: %w", len(runs), err)
		}
		if !t.matches(stepsBy) {
			stale[run] = true
			traces = append(traces, t.id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read the traces of %d runs: %w", len(runs), err)
	}
	var out []int64
	for _, r := range runs {
		if stale[r] {
			out = append(out, r)
			delete(stale, r)
		}
	}
	return out, traces, nil
}

// ReadSteps gives a reader (compare, history) a connection on which the
// steps of runs are the ones stepsBy asks for (a kernel pattern, or ""
// for annotations), without writing the warehouse: the steps of the traces
// stored another way are found again into TEMP tables of this connection,
// `steps` and a `kernels` view whose step column is the new one, which
// come before the stored tables in DuckDB's search path (in queries,
// views and macros alike). So it works on a read-only warehouse, beside
// other readers, and on a lake; the stored steps change only by ingest
// (or RecomputeSteps). Every query that must see these steps runs on the
// returned connection, which the caller closes. The saved step aggregates
// of such runs no longer match their fingerprint there, so readers compute
// them from the events.
func ReadSteps(ctx context.Context, db *sql.DB, runs []int64, stepsBy string) (*sql.Conn, error) {
	if err := CheckStepsBy(stepsBy); err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("open a warehouse connection: %w", err)
	}
	if err := overlaySteps(ctx, conn, runs, stepsBy); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// overlaySteps makes conn's steps of runs the ones stepsBy asks for
// (ReadSteps).
func overlaySteps(ctx context.Context, conn *sql.Conn, runs []int64, stepsBy string) error {
	_, traces, err := staleSteps(ctx, conn, runs, stepsBy)
	if err != nil || len(traces) == 0 {
		return err
	}
	var db string
	if err := conn.QueryRowContext(ctx, `SELECT current_database()`).Scan(&db); err != nil {
		return fmt.Errorf("find steps: %w", err)
	}
	// The stored tables by their whole name: "main" alone could be the
	// temporary catalog's schema.
	stored := func(table string) string { return `"` + strings.ReplaceAll(db, `"`, `""`) + `".main.` + table }
	// While the steps are found, `kernels` is a copy of the stale traces'
	// kernels, which link_steps.sql updates as it does the stored table.
	setup := []string{
		`CREATE OR REPLACE TEMP TABLE steps AS SELECT * FROM ` + stored("steps"),
		`CREATE OR REPLACE TEMP TABLE kernels AS SELECT * FROM ` + stored("kernels") + ` WHERE list_contains($traces::BIGINT[], trace_id::BIGINT)`,
	}
	for _, q := range setup {
		if _, err := inline.Exec(ctx, conn, q, sql.Named("traces", traces)); err != nil {
			return fmt.Errorf("find steps: %w", err)
		}
	}
	for _, trace := range traces {
		if err := ingest.FindSteps(ctx, conn, trace, stepsBy); err != nil {
			return err
		}
	}
	// Then every kernel is read from the stored table, with the new step
	// where it was found again.
	for _, q := range []string{
		`CREATE OR REPLACE TEMP TABLE _kernel_steps AS SELECT kernel_id, step FROM temp.main.kernels`,
		`DROP TABLE temp.main.kernels`,
		`CREATE TEMP VIEW kernels AS
		 SELECT k.* REPLACE (CASE WHEN s.kernel_id IS NULL THEN k.step ELSE s.step END AS step)
		 FROM ` + stored("kernels") + ` k LEFT JOIN temp.main._kernel_steps s ON s.kernel_id = k.kernel_id`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("find steps: %w", err)
		}
	}
	return nil
}

type traceSteps struct {
	id           int64
	source, name string
}

func (t traceSteps) matches(stepsBy string) bool {
	if stepsBy == "" {
		return t.source != "" && t.source != ingest.KernelSource
	}
	return t.source == ingest.KernelSource && t.name == stepsBy
}

func runTraces(ctx context.Context, db *sql.DB, run int64) ([]traceSteps, error) {
	rows, err := inline.Query(ctx, db, stmt("run_traces"), sql.Named("run", run))
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
	changed := false
	for _, t := range traces {
		if t.matches(stepsBy) {
			continue
		}
		changed = true
		if err := redoSteps(ctx, db, t.id, stepsBy); err != nil {
			return err
		}
	}
	if !changed {
		return nil
	}
	return SaveSteps(ctx, db, run)
}

func redoSteps(ctx context.Context, db *sql.DB, trace int64, stepsBy string) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("find steps of trace %d: %w", trace, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	if err := ingest.FindSteps(ctx, tx, trace, stepsBy); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("find steps of trace %d: commit: %w", trace, err)
	}
	return nil
}
