package queries

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
)

// TestFusionCopiesForgotten: migration 0016 forgets the fuse-pattern
// copies saved before it (0015 changed a tie-break), so the run is pending
// again and a report computes its rows until the next save.
func TestFusionCopiesForgotten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := schema.Open(ctx, filepath.Join(t.TempDir(), "w.duckdb"), schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := ingest.Ingest(ctx, w, []string{"../testdata/demo/trtllm-llama"}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := ingest.InstallCatalog(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatal(err)
	}
	if err := aggregates.SaveFusion(ctx, w.DB, []int64{1}); err != nil {
		t.Fatal(err)
	}
	p := FusionMatchesParams{Run: 1, Rank: sql.NullInt64{Int64: 0, Valid: true}}
	if _, saved, err := FusionMatchesCached(ctx, w.DB, p); err != nil || !saved {
		t.Fatalf("before 0016: saved %v %v", saved, err)
	}
	migrationData(t, w.DB, 16)
	if pending, err := aggregates.FusionPending(ctx, w.DB); err != nil || len(pending) != 1 || pending[0] != 1 {
		t.Errorf("pending after 0016: %v %v, want [1]", pending, err)
	}
	want, err := FusionMatches(ctx, w.DB, p)
	if err != nil {
		t.Fatal(err)
	}
	if got, saved, err := FusionMatchesCached(ctx, w.DB, p); err != nil || saved || len(got) != len(want) || len(want) == 0 {
		t.Errorf("after 0016: saved %v, %d rows %v; want %d computed", saved, len(got), err, len(want))
	}
}
