package target

import (
	"context"
	"database/sql"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/queries"
)

// Finish is aggregates.Finish for the reports' verdict floor
// (queries.DefaultMinDurNS, for which the overlap rows are saved):
// `ingest`, `triage PATH`, `compare PATH` and `capture` end with it.
func Finish(ctx context.Context, db *sql.DB, cat *catalog.Catalog) error {
	return aggregates.Finish(ctx, db, cat, queries.DefaultMinDurNS)
}
