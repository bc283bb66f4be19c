package target

import (
	"context"
	"database/sql"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/queries"
)

// Finish is ingest.Finish (the catalog installed, each run's overlap and
// step aggregates saved) plus each run's fuse-pattern rows per rank
// (ingest.SaveFusion with queries/fusion_matches.sql), which compare reads
// instead of matching both runs' kernels again, and its overlap-opportunity
// rows per rank (ingest.SaveOverlapRows with queries/overlap_by_kernel.sql),
// which a triage of one rank reads. Like ingest.Finish it
// works from what the warehouse holds, so running it again finishes an
// interrupted job. `ingest`, `triage PATH`, `compare PATH` and `capture`
// end with it.
func Finish(ctx context.Context, db *sql.DB, cat *catalog.Catalog) error {
	if err := ingest.Finish(ctx, db, cat); err != nil {
		return err
	}
	runs, err := ingest.FusionPending(ctx, db)
	if err != nil {
		return err
	}
	if len(runs) > 0 {
		match, err := queries.Text("fusion_matches")
		if err != nil {
			return err
		}
		if err := ingest.SaveFusion(ctx, db, runs, match); err != nil {
			return err
		}
	}
	if runs, err = ingest.OverlapRowsPending(ctx, db); err != nil || len(runs) == 0 {
		return err
	}
	table, err := queries.Text("overlap_by_kernel")
	if err != nil {
		return err
	}
	return ingest.SaveOverlapRows(ctx, db, runs, table, queries.DefaultMinDurNS)
}
