package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// FusionPending lists the runs whose saved fuse-pattern rows are missing or
// older than one of their traces (what SaveFusion still has to do).
func FusionPending(ctx context.Context, db *sql.DB) ([]int64, error) {
	runs, err := pendingRuns(ctx, db, "fusion_pending")
	if err != nil {
		return nil, fmt.Errorf("find runs without saved fuse patterns: %w", err)
	}
	return runs, nil
}

// SaveFusion computes the fuse-pattern rows of each rank of run once and
// saves them in fusion_match_store, so that compare reads them instead of
// walking the run's streams again (about 3-4 CPU-seconds per million
// kernels). match is the text of queries/fusion_matches.sql (ingest cannot
// import queries: its tests ingest), run for a single-trace report of each
// rank, every stage, no share floor. Calling it again replaces the copies;
// readers ignore a copy whose run, catalog or gates changed since
// (_fusion_fingerprint). It needs the catalog installed.
func SaveFusion(ctx context.Context, db *sql.DB, run int64, match string) (err error) {
	phase(ctx, PhaseFusion)
	insert := "INSERT INTO fusion_match_store SELECT $run::INTEGER, $rank::INTEGER, m.* FROM (\n" + match + "\n) m"
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save fuse patterns of run %d: %w", run, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	ranks, err := runRanks(ctx, tx, run)
	if err != nil {
		return fmt.Errorf("save fuse patterns of run %d: %w", run, err)
	}
	// Forget the copies first and record each last, so that even without
	// the transaction a half-written copy could not be read.
	for _, name := range []string{"fusion_store_forget", "fusion_store_clear"} {
		if _, err := execNamed(ctx, tx, stmt(name), sql.Named("run", run)); err != nil {
			return fmt.Errorf("save fuse patterns of run %d: %s: %w", run, name, err)
		}
	}
	for _, rank := range ranks {
		if _, err := execNamed(ctx, tx, insert, sql.Named("run", run), sql.Named("rank", rank),
			sql.Named("mapping", nil), sql.Named("stage", nil), sql.Named("min_share", 0.0)); err != nil {
			return fmt.Errorf("save fuse patterns of run %d rank %d: %w", run, rank, err)
		}
		if _, err := execNamed(ctx, tx, stmt("fusion_store_commit"), sql.Named("run", run), sql.Named("rank", rank)); err != nil {
			return fmt.Errorf("save fuse patterns of run %d rank %d: %w", run, rank, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save fuse patterns of run %d: commit: %w", run, err)
	}
	return nil
}

// runRanks lists the ranks of run with GPU events (fusion_ranks.sql), whose
// fuse-pattern and overlap rows are saved.
func runRanks(ctx context.Context, tx *sql.Tx, run int64) ([]int64, error) {
	var ranks []int64
	rows, err := queryNamed(ctx, tx, stmt("fusion_ranks"), sql.Named("run", run))
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var r int64
		if err := rows.Scan(&r); err != nil {
			rows.Close()
			return nil, err
		}
		ranks = append(ranks, r)
	}
	return ranks, rows.Close()
}
