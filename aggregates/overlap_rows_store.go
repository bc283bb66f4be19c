package aggregates

import (
	"context"
	"database/sql"
)

// OverlapRowsPending lists the runs whose saved overlap-opportunity rows
// are missing or older than one of their traces (what SaveOverlapRows
// still has to do).
func OverlapRowsPending(ctx context.Context, db *sql.DB) ([]int64, error) {
	p, err := finishPending(ctx, db)
	return p.rows, err
}

// SaveOverlapRows computes the overlap-opportunity rows of each rank of
// runs once and saves them in overlap_row_store, so that a triage of one
// rank reads them instead of aggregating every kernel's overlap again
// (about 0.45 s per million kernels). Each rank's rows are those of a
// single-trace report of that rank, every stage, no share floor, with the
// verdict floor minDurNS (recorded with the copy; _overlap_rows_for, which
// queries/overlap_by_kernel.sql reads too). Calling it again replaces the
// copies; readers ignore a copy whose run, classifier or traces changed
// since (_overlap_rows_fingerprint), or whose floor is not theirs. It
// needs the per-kernel overlap saved first only for speed: without it the
// rows are computed from the kernels.
func SaveOverlapRows(ctx context.Context, db *sql.DB, runs []int64, minDurNS int64) error {
	phase(ctx, PhaseOverlapRows)
	return overlapRowsStore(minDurNS).save(ctx, db, runs)
}

// overlapRowsStore saves the rows of _overlap_rows_for
// (overlap_rows_store.sql) for the verdict floor minDurNS.
func overlapRowsStore(minDurNS int64) rankStore {
	return rankStore{
		what:   "overlap rows",
		forget: "overlap_rows_forget", clear: "overlap_rows_clear", rows: "overlap_rows_store", commit: "overlap_rows_commit",
		// for runs whose saved overlap is current (batchable)
		saved: "overlap_rows_store_saved",
		args: []any{sql.Named("mapping", nil), sql.Named("stage", nil), sql.Named("min_share", 0.0),
			sql.Named("min_dur_ns", minDurNS), sql.Named("overlap_fp", nil)},
		commitArgs: []any{sql.Named("min_dur_ns", minDurNS)},
		batchable:  currentOverlap,
	}
}
