package ingest

import (
	"context"
	"database/sql"

	"github.com/tracehouse/tracehouse/catalog"
)

// Finish is aggregates.FinishPerRun, set by finish_ext_test.go. A few
// tests here check that what an ingest stored also finishes (extreme
// values, a re-run after an interrupt, removing saved copies); this
// package's own tests cannot import aggregates, which imports ingest, but
// its external test package can, and hands the function over before any
// test runs.
var Finish func(ctx context.Context, db *sql.DB, cat *catalog.Catalog) error
