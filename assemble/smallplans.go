package assemble

import (
	"context"
	"database/sql"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/target"
)

// smallPlanEvents is the most GPU events, over every run a step reads, for
// which it reads with DuckDB's large-input optimizers off
// (target.SmallPlanEvents, the bound SaveTriages and the finish use; a
// test lowers it).
var smallPlanEvents int64 = target.SmallPlanEvents

// smallPlans turns off, until restore, the DuckDB optimizers that pay
// only on large inputs (ingest.SmallPlans) when the runs a step reads hold
// at most smallPlanEvents GPU events in all, and changes nothing for
// larger ones. The demo's runs are a few hundred GPU events each: a triage
// or compare of them is some dozens of statements of large plans over a
// few hundred rows: with them off a compare of two takes 5-7% less CPU, a
// triage computed 1-9% by the load (bench/README.md, "Sixty-second
// figures"). The caller joins restore's error to the step's.
func smallPlans(ctx context.Context, db *sql.DB, events int64) (restore func() error, _ error) {
	if events > smallPlanEvents {
		return func() error { return nil }, nil
	}
	return ingest.SmallPlans(ctx, db)
}
