package ingest

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tracehouse/tracehouse/inline"
)

// KernelSource is the steps.source of steps found by a kernel pattern
// (--steps-by; insert_steps.sql).
const KernelSource = "kernel"

// FindSteps finds the steps of trace again on e, as an ingest finds them
// (steps_clear.sql, insert_steps.sql, link_steps.sql): by the kernel
// pattern stepsBy, or from annotations when it is "". e is a transaction
// (aggregates.RecomputeSteps), or a connection whose TEMP steps and
// kernels shadow the stored ones (aggregates.ReadSteps).
func FindSteps(ctx context.Context, e inline.Execer, trace int64, stepsBy string) error {
	var by any
	if stepsBy != "" {
		by = stepsBy
	}
	for _, q := range []struct {
		name string
		args []any
	}{
		{"steps_clear", []any{sql.Named("trace", trace)}},
		{"insert_steps", []any{sql.Named("trace", trace), sql.Named("steps_by", by)}},
		{"link_steps", []any{sql.Named("trace", trace)}},
	} {
		if _, err := inline.Exec(ctx, e, stmt(q.name), q.args...); err != nil {
			return fmt.Errorf("find steps of trace %d: %s: %w", trace, q.name, err)
		}
	}
	return nil
}
