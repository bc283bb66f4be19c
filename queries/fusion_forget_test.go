package queries

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestFusionCopiesForgotten: migration 0016 forgets the fuse-pattern
// copies saved before it (0015 changed a tie-break), so the run is pending
// again and a report computes its rows until the next save.
func TestFusionCopiesForgotten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, demoCatalogTemplate(t))
	run := demoRuns(t, w.DB)["trtllm-llama"]
	if err := aggregates.SaveFusion(ctx, w.DB, []int64{run}); err != nil {
		t.Fatal(err)
	}
	p := FusionMatchesParams{Run: run, Rank: sql.NullInt64{Int64: 0, Valid: true}}
	if _, saved, err := FusionMatchesCached(ctx, w.DB, p); err != nil || !saved {
		t.Fatalf("before 0016: saved %v %v", saved, err)
	}
	if pending, err := aggregates.FusionPending(ctx, w.DB); err != nil || slices.Contains(pending, run) {
		t.Fatalf("before 0016: pending %v %v, with run %d saved", pending, err, run)
	}
	migrationData(t, w.DB, 16)
	if pending, err := aggregates.FusionPending(ctx, w.DB); err != nil || !slices.Contains(pending, run) {
		t.Errorf("pending after 0016: %v %v, want run %d among them", pending, err, run)
	}
	want, err := FusionMatches(ctx, w.DB, p)
	if err != nil {
		t.Fatal(err)
	}
	if got, saved, err := FusionMatchesCached(ctx, w.DB, p); err != nil || saved || len(got) != len(want) || len(want) == 0 {
		t.Errorf("after 0016: saved %v, %d rows %v; want %d computed", saved, len(got), err, len(want))
	}
}
