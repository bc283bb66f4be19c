package schema

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// smallPlanOptimizers are the optimizers SmallPlans turns off: each adds
// work to a plan that pays only on large inputs (compressed_materialization
// a projection packing and unpacking the keys and payloads around each
// join, aggregate and sort, to hold less memory; join_filter_pushdown a
// filter built from each hash join's build side for the probe side's
// scans; late_materialization a join back to the rows a top-N or limit
// kept; common_subplan a search for equal subtrees, materialized once).
// None changes which rows a statement returns: they are plan rewrites, and
// every golden and saved table is the same with them off.
var smallPlanOptimizers = []string{"compressed_materialization", "join_filter_pushdown", "common_subplan", "late_materialization"}

// SmallPlans turns off, until restore, the DuckDB optimizers that pay only
// on large inputs (smallPlanOptimizers; the setting is the database's, so
// every connection's), keeping those the caller turned off. A small run's
// finish and saved triage report are a few dozen statements of large plans
// (up to some 380 operators) over a few hundred rows each, where those
// optimizers' work and extra operators cost more than they save: one small
// trace's ingest 3-5% of its CPU (bench/README.md, "Sixtieth figures").
func SmallPlans(ctx context.Context, db *sql.DB) (restore func() error, _ error) {
	none := func() error { return nil }
	var was string
	if err := db.QueryRowContext(ctx, `SELECT current_setting('disabled_optimizers')`).Scan(&was); err != nil {
		return none, fmt.Errorf("read DuckDB's disabled optimizers: %w", err)
	}
	off := map[string]bool{}
	var now []string
	for _, o := range strings.Split(was, ",") {
		if o = strings.TrimSpace(o); o != "" && !off[o] {
			off[o] = true
			now = append(now, o)
		}
	}
	n := len(now)
	for _, o := range smallPlanOptimizers {
		if !off[o] {
			now = append(now, o)
		}
	}
	if len(now) == n {
		return none, nil
	}
	if _, err := db.ExecContext(ctx, `SET disabled_optimizers = '`+strings.Join(now, ",")+`'`); err != nil {
		return none, fmt.Errorf("turn DuckDB's large-input optimizers off: %w", err)
	}
	return func() error {
		// The caller's context may be cancelled by now; the setting still goes back.
		if _, err := db.ExecContext(context.WithoutCancel(ctx), `SET disabled_optimizers = '`+was+`'`); err != nil {
			return fmt.Errorf("restore DuckDB's optimizers: %w", err)
		}
		return nil
	}, nil
}
