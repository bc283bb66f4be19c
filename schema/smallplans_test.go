package schema

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// disabledOptimizers is DuckDB's disabled_optimizers setting, as a list.
func disabledOptimizers(t *testing.T, w *Warehouse) []string {
	t.Helper()
	var v string
	if err := w.DB.QueryRow(`SELECT current_setting('disabled_optimizers')`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range strings.Split(v, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, o)
		}
	}
	slices.Sort(out)
	return out
}

// TestSmallPlans: SmallPlans turns the large-input optimizers off beside
// those the caller turned off, and restore puts the caller's setting back;
// with all of them off already it changes nothing.
func TestSmallPlans(t *testing.T) {
	ctx := context.Background()
	w, err := Open(ctx, Memory, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.DB.Exec(`SET disabled_optimizers = 'filter_pullup,join_filter_pushdown'`); err != nil {
		t.Fatal(err)
	}
	caller := disabledOptimizers(t, w)
	restore, err := SmallPlans(ctx, w.DB)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values(append([]string{"filter_pullup"}, smallPlanOptimizers...)))
	if got := disabledOptimizers(t, w); !slices.Equal(got, want) {
		t.Errorf("under SmallPlans: %v, want %v", got, want)
	}
	// Already off: nothing to do, and its restore leaves the setting.
	again, err := SmallPlans(ctx, w.DB)
	if err != nil {
		t.Fatal(err)
	}
	if err := again(); err != nil {
		t.Fatal(err)
	}
	if got := disabledOptimizers(t, w); !slices.Equal(got, want) {
		t.Errorf("after a second SmallPlans' restore: %v, want %v", got, want)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if got := disabledOptimizers(t, w); !slices.Equal(got, caller) {
		t.Errorf("restored: %v, want %v", got, caller)
	}
}
