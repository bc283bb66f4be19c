package target

import (
	"context"
	"testing"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestSaveTriagesPutsOptimizersBack: SaveTriages computes a small run's
// report with the large-input optimizers off (schema.SmallPlans) and puts
// the caller's setting back after.
func TestSaveTriagesPutsOptimizersBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, ingestedDemo(t))
	if _, err := ingest.RemoveRuns(ctx, w.DB, []string{"sglang-formal", "tokenspeed-deepseek", "vllm-qwen-moe", "trtllm-llama"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.DB.ExecContext(ctx, `SET disabled_optimizers = 'filter_pullup'`); err != nil {
		t.Fatal(err)
	}
	if err := SaveTriages(ctx, w.DB); err != nil {
		t.Fatal(err)
	}
	var saved int
	if err := w.DB.QueryRowContext(ctx, `SELECT count(*) FROM triage_store_runs`).Scan(&saved); err != nil || saved != 1 {
		t.Fatalf("saved triage reports %d, %v; want 1", saved, err)
	}
	var off string
	if err := w.DB.QueryRowContext(ctx, `SELECT current_setting('disabled_optimizers')`).Scan(&off); err != nil {
		t.Fatal(err)
	}
	if off != "filter_pullup" {
		t.Errorf("after SaveTriages: disabled optimizers %q, want the caller's %q", off, "filter_pullup")
	}
}
