package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// OverlapRowsPending lists the runs whose saved overlap-opportunity rows
// are missing or older than one of their traces (what SaveOverlapRows
// still has to do).
func OverlapRowsPending(ctx context.Context, db *sql.DB) ([]int64, error) {
	runs, err := pendingRuns(ctx, db, "overlap_rows_pending")
	if err != nil {
		return nil, fmt.Errorf("find runs without saved overlap rows: %w", err)
	}
	return runs, nil
}

// SaveOverlapRows computes the overlap-opportunity rows of each rank of run
// once and saves them in overlap_row_store, so that a triage of one rank
// reads them instead of aggregating every kernel's overlap again (about
// 0.45 s per million kernels). table is the text of
// queries/overlap_by_kernel.sql (ingest cannot import queries: its tests
// ingest), run for a single-trace report of each rank, every stage, no
// share floor, with the verdict floor minDurNS (recorded with the copy).
// Calling it again replaces the copies; readers ignore a copy whose run,
// classifier or traces changed since (_overlap_rows_fingerprint), or whose
// floor is not theirs. It needs the per-kernel overlap saved first (Finish)
// only for speed: without it the rows are computed from the kernels.
func SaveOverlapRows(ctx context.Context, db *sql.DB, run int64, table string, minDurNS int64) (err error) {
	phase(ctx, PhaseOverlapRows)
	insert := "INSERT INTO overlap_row_store SELECT $run::INTEGER, $rank::INTEGER, t.* FROM (\n" + table + "\n) t"
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save overlap rows of run %d: %w", run, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	ranks, err := runRanks(ctx, tx, run)
	if err != nil {
		return fmt.Errorf("save overlap rows of run %d: %w", run, err)
	}
	// Forget the copies first and record each last, so that even without
	// the transaction a half-written copy could not be read.
	for _, name := range []string{"overlap_rows_forget", "overlap_rows_clear"} {
		if _, err := execNamed(ctx, tx, stmt(name), sql.Named("run", run)); err != nil {
			return fmt.Errorf("save overlap rows of run %d: %s: %w", run, name, err)
		}
	}
	for _, rank := range ranks {
		if _, err := execNamed(ctx, tx, insert, sql.Named("run", run), sql.Named("rank", rank),
			sql.Named("mapping", nil), sql.Named("stage", nil), sql.Named("min_share", 0.0),
			sql.Named("min_dur_ns", minDurNS), sql.Named("overlap_fp", nil)); err != nil {
			return fmt.Errorf("save overlap rows of run %d rank %d: %w", run, rank, err)
		}
		if _, err := execNamed(ctx, tx, stmt("overlap_rows_commit"), sql.Named("run", run), sql.Named("rank", rank),
			sql.Named("min_dur_ns", minDurNS)); err != nil {
			return fmt.Errorf("save overlap rows of run %d rank %d: %w", run, rank, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save overlap rows of run %d: commit: %w", run, err)
	}
	return nil
}
