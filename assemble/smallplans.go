package assemble

import (
	"context"
	"database/sql"

	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/target"
)

// planBound is the most GPU events, over every run a step reads, for
// which it reads with DuckDB's large-input optimizers off: bound, or when
// 0 target.SmallPlanEvents (the bound SaveTriages and the finish use).
func planBound(bound int64) int64 {
	if bound == 0 {
		return target.SmallPlanEvents
	}
	return bound
}

// smallPlans turns off, until restore, the DuckDB optimizers that pay
// only on large inputs (schema.SmallPlans) when the runs a step reads hold
// at most bound GPU events in all (planBound), and changes nothing for
// larger ones. The demo's runs are a few hundred GPU events each: a triage
// or compare of them is some dozens of statements of large plans over a
// few hundred rows: with them off a compare of two takes 5-7% less CPU, a
// triage computed 1-9% by the load (bench/README.md, "Sixty-second
// figures"). The caller joins restore's error to the step's.
func smallPlans(ctx context.Context, db *sql.DB, events, bound int64) (restore func() error, _ error) {
	if events > bound {
		return func() error { return nil }, nil
	}
	return schema.SmallPlans(ctx, db)
}
