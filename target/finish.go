package target

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/queries"
)

// Finish is aggregates.FinishPerRun (the catalog installed, each run's overlap and
// step aggregates saved) plus each run's fuse-pattern rows per rank
// (aggregates.SaveFusion with queries/fusion_matches.sql), which compare reads
// instead of matching both runs' kernels again, and its overlap-opportunity
// rows per rank (aggregates.SaveOverlapRows with queries/overlap_by_kernel.sql),
// which a triage of one rank reads. Like aggregates.FinishPerRun it
// works from what the warehouse holds, so running it again finishes an
// interrupted job. `ingest`, `triage PATH`, `compare PATH` and `capture`
// end with it.
//
// After the catalog the saves run side by side, each in its own
// transaction on its own connection (they write different tables): the
// fuse-pattern rows beside the overlap, then the step aggregates beside the
// overlap rows, both of which read the saved overlap. On a small run each
// save is mostly DuckDB planning its statements on one thread, so one save
// alone left the other core idle (0.6 MB trace: 110 -> 81-99 ms; 270 MB:
// 580 -> 460-540 ms, for about 35 MiB more at the peak).
//
// A run whose copy cannot be saved fails alone (aggregates.FinishPerRun): the saves
// go on for the other runs and copies, and Finish returns an
// *aggregates.FinishError naming each failed run and copy. On a file warehouse
// DuckDB's memory is bounded meanwhile (ingest.BoundFinish).
func Finish(ctx context.Context, db *sql.DB, cat *catalog.Catalog) error {
	if err := aggregates.FinishCatalog(ctx, db, cat); err != nil {
		return err
	}
	ctx, restore, err := ingest.BoundFinish(ctx, db, aggregates.DuckDBFinishMiB)
	if err != nil {
		return err
	}
	// A run's failure must not cancel the other saves (errgroup cancels on
	// an error): it is set aside and joined at the end.
	var mu sync.Mutex
	var failed []error
	alone := func(err error) error {
		var fe *aggregates.FinishError
		if errors.As(err, &fe) {
			mu.Lock()
			defer mu.Unlock()
			failed = append(failed, err)
			return nil
		}
		return err
	}
	g, gctx := errgroup.WithContext(aggregates.Announce(ctx, aggregates.PhaseSaving))
	g.Go(func() error { return alone(saveFusion(gctx, db)) })
	g.Go(func() error {
		if err := alone(aggregates.SavePendingOverlap(gctx, db)); err != nil {
			return err
		}
		h, hctx := errgroup.WithContext(gctx)
		h.Go(func() error { return alone(aggregates.SavePendingSteps(hctx, db)) })
		h.Go(func() error { return alone(saveOverlapRows(hctx, db)) })
		return h.Wait()
	})
	err = g.Wait()
	return aggregates.JoinFinishErrors(append(failed, err, restore())...)
}

// saveFusion saves the fuse-pattern rows of every run without a current
// copy.
func saveFusion(ctx context.Context, db *sql.DB) error {
	runs, err := aggregates.FusionPending(ctx, db)
	if err != nil || len(runs) == 0 {
		return err
	}
	match, err := queries.Text("fusion_matches")
	if err != nil {
		return err
	}
	return aggregates.SaveFusion(ctx, db, runs, match)
}

// saveOverlapRows saves the overlap-opportunity rows of every run without a
// current copy; it needs the saved overlap only for speed.
func saveOverlapRows(ctx context.Context, db *sql.DB) error {
	runs, err := aggregates.OverlapRowsPending(ctx, db)
	if err != nil || len(runs) == 0 {
		return err
	}
	table, err := queries.Text("overlap_by_kernel")
	if err != nil {
		return err
	}
	return aggregates.SaveOverlapRows(ctx, db, runs, table, queries.DefaultMinDurNS)
}
