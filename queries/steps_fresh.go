package queries

import (
	"context"
	"database/sql"
)

// StepsFresh says, per run of runs, whether its saved step aggregates are
// current (steps_fresh.sql, steps_fresh_run.sql): what the $fresh
// parameter of the compare and history queries wants.
func StepsFresh(ctx context.Context, q Querier, runs []int64) (map[int64]bool, error) {
	if runs == nil {
		runs = []int64{}
	}
	// One run (compare's sides) by its own statement, which reads that
	// run's kernels only (steps_fresh_run.sql); a list in one pass.
	name, args := "steps_fresh", []any{sql.Named("runs", runs)}
	if len(runs) == 1 {
		name, args = "steps_fresh_run", []any{sql.Named("run", runs[0])}
	}
	rows, err := collect(ctx, q, name, args, func(rows *sql.Rows) (struct {
		run   int64
		fresh bool
	}, error) {
		var r struct {
			run   int64
			fresh bool
		}
		err := rows.Scan(&r.run, &r.fresh)
		return r, err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[int64]bool, len(rows))
	for _, r := range rows {
		out[r.run] = r.fresh
	}
	return out, nil
}
