package aggregates

import (
	"context"
	"database/sql"
	"testing"
)

// optimizersOff is DuckDB's disabled_optimizers setting.
func optimizersOff(t *testing.T, db *sql.DB) string {
	t.Helper()
	var v string
	if err := db.QueryRow(`SELECT current_setting('disabled_optimizers')`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFinishSmallPlans: a finish whose runs due hold at most the unbounded
// GPU events saves with the large-input optimizers off
// (schema.SmallPlans), a larger one (here: bound 0) with the caller's;
// after either the caller's setting is back.
func TestFinishSmallPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := threeDemoRuns(t)
	caller := optimizersOff(t, w.DB)
	for _, tc := range []struct {
		unbounded int64
		small     bool
	}{{SmallRunEvents, true}, {0, false}} {
		todo, restore, err := finishSettingsAbove(ctx, w.DB, tc.unbounded, DuckDBFinishMiB)
		if err != nil {
			t.Fatal(err)
		}
		if todo.kernels() == 0 {
			t.Fatal("no GPU events due")
		}
		if got := optimizersOff(t, w.DB); (got != caller) != tc.small {
			t.Errorf("unbounded %d, %d GPU events due: disabled optimizers %q (the caller's %q)", tc.unbounded, todo.kernels(), got, caller)
		}
		if err := restore(); err != nil {
			t.Fatal(err)
		}
		if got := optimizersOff(t, w.DB); got != caller {
			t.Errorf("unbounded %d, restored: disabled optimizers %q, want %q", tc.unbounded, got, caller)
		}
	}
}
