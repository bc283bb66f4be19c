package queries

import (
	"context"
	"database/sql"
)

// StepsFresh says, per run of runs, whether its saved step aggregates are
// current (steps_fresh.sql): what the $fresh parameter of the compare and
// history queries wants.
func StepsFresh(ctx context.Context, q Querier, runs []int64) (map[int64]bool, error) {
	if runs == nil {
		runs = []int64{}
	}
	rows, err := collect(ctx, q, "steps_fresh", []any{sql.Named("runs", runs)}, func(rows *sql.Rows) (struct {
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
