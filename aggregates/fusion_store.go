package aggregates

import (
	"context"
	"database/sql"
)

// FusionPending lists the runs whose saved fuse-pattern rows are missing or
// older than one of their traces (what SaveFusion still has to do).
func FusionPending(ctx context.Context, db *sql.DB) ([]int64, error) {
	p, err := finishPending(ctx, db)
	return p.fusion, err
}

// SaveFusion computes the fuse-pattern rows of each rank of runs once and
// saves them in fusion_match_store, so that compare reads them instead of
// walking the runs' streams again (about 3-4 CPU-seconds per million
// kernels). Each rank's rows are those of a single-trace report of that
// rank, every stage, no share floor (_fusion_matches_for, which
// queries/fusion_matches.sql reads too). Small runs are computed together
// (batchKernels); a rank of more than fusionSweepKernels GPU events has
// its chain occurrences found in Go (sweepChains) and is saved alone.
// Calling it again replaces the copies; readers ignore a
// copy whose run, catalog or gates changed since (_fusion_fingerprint). It
// needs the catalog installed.
func SaveFusion(ctx context.Context, db *sql.DB, runs []int64) error {
	phase(ctx, PhaseFusion)
	return fusionStore().save(ctx, db, runs)
}

// fusionStore saves the rows of _fusion_matches_for (fusion_store_rows.sql).
func fusionStore() rankStore {
	return rankStore{
		what:   "fuse patterns",
		forget: "fusion_store_forget", clear: "fusion_store_clear", rows: "fusion_store_rows", commit: "fusion_store_commit",
		args: []any{sql.Named("mapping", nil), sql.Named("stage", nil), sql.Named("min_share", 0.0)},
		// a large rank's chain occurrences are found in Go (fusion_sweep.go)
		chains: func(ctx context.Context, conn *sql.Conn, r runRank) ([]any, error) {
			chains, hits, err := sweepChains(ctx, conn, r.run, r.rank)
			return []any{sql.Named("chains", chains), sql.Named("hits", hits)}, err
		},
		unchained:   []any{sql.Named("chains", nil), sql.Named("hits", nil)},
		chainsAbove: fusionSweepKernels,
		drop:        dropChainTables,
	}
}
