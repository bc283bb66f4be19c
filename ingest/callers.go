package ingest

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
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
