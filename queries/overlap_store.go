package queries

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// StoreKernelOverlap computes run's per-kernel overlap once and saves it in
// kernel_overlap_store, so that later OverlapByKernel calls read it instead of
// sorting the run's kernels again (about 2 CPU-seconds per million kernels).
// Call it after ingesting a run; calling it again replaces the copy. The
// copy is ignored, and the overlap computed, as soon as the run's kernels or
// their names' categories change, so a stale copy is never read.
func StoreKernelOverlap(ctx context.Context, db *sql.DB, run int64) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store overlap of run %d: %w", run, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	// Forget the copy first and record it last, so that even without the
	// transaction a half-written copy could not be read.
	for _, name := range []string{"overlap_store_forget", "overlap_store_clear", "overlap_store_rows", "overlap_store_commit"} {
		text, err := Text(name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, text, sql.Named("run", run)); err != nil {
			return fmt.Errorf("store overlap of run %d: %s: %w", run, name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store overlap of run %d: commit: %w", run, err)
	}
	return nil
}
