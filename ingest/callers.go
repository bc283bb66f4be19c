package ingest

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"strings"
)

// callersOnlyCores is the most cores on which an ingest and its finish run
// DuckDB without worker threads (CallersOnly).
const callersOnlyCores = 2

// CallersOnly makes DuckDB work every statement on the threads that call
// it, with no worker thread of its own, on a machine of callersOnlyCores
// cores or fewer (by GOMAXPROCS), until restore; on a larger one it
// changes nothing. DuckDB 1.5's calling thread busy-waits while a worker
// holds the statement's last tasks (PendingQueryResult::ExecuteInternal
// spins on its context lock until the workers are done, duckdb#22178):
// every pipeline of one task (a table under 122,880 rows, an ordered
// insert) then took two threads' CPU time for one thread's work, and on 2
// cores the spinning thread also took a core from the Go decoders and the
// other save. An ingest and its finish have parallel work of their own
// (the decoders, one loader per file, saves side by side), so on 2 cores
// the caller alone loses little: 270 MB SGLang trace, about 1 CPU-s of 6
// less (bench/README.md, "Seventh figures"). The thread count itself is
// kept (it sizes DuckDB's hash aggregates, schema.minAggregateThreads):
// the external threads are raised to it. Ingest does this for its load;
// aggregates.Finish and FinishPerRun for their saves, whatever the size of
// the runs due (a large run's saves, one after another, spun too).
func CallersOnly(ctx context.Context, db *sql.DB) (restore func() error, _ error) {
	return callersOnly(ctx, db, runtime.GOMAXPROCS(0))
}

// callersOnly is CallersOnly on a machine of cores cores.
func callersOnly(ctx context.Context, db *sql.DB, cores int) (restore func() error, _ error) {
	none := func() error { return nil }
	if cores > callersOnlyCores {
		return none, nil
	}
	var threads, external int64
	if err := db.QueryRowContext(ctx, `SELECT current_setting('threads')::BIGINT, current_setting('external_threads')::BIGINT`).Scan(&threads, &external); err != nil {
		return none, fmt.Errorf("read DuckDB's thread settings: %w", err)
	}
	if external >= threads {
		return none, nil
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf(`SET external_threads = %d`, threads)); err != nil {
		return none, fmt.Errorf("run DuckDB on the calling threads: %w", err)
	}
	return func() error {
		// The caller's context may be cancelled by now; the setting still goes back.
		if _, err := db.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`SET external_threads = %d`, external)); err != nil {
			return fmt.Errorf("restore DuckDB's worker threads: %w", err)
		}
		return nil
	}, nil
}

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
