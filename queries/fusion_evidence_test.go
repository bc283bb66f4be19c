package queries

import (
	"context"
	"math"
	"testing"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestFusionEvidenceShares: each fuse row's evidence kernels carry their
// share of the stage, and together they make up the row's share (the
// evidence is the related kernels grouped by short name). Checked against
// the kernels' own durations summed here.
func TestFusionEvidenceShares(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, demoCatalogTemplate(t))
	runs := demoRuns(t, w.DB)
	checked := 0
	for _, run := range []int64{runs["sglang-llama"], runs["vllm-qwen-moe"]} {
		rows, err := FusionMatches(ctx, w.DB, FusionMatchesParams{Run: run, Rank: rankOf(0)})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if len(r.EvidenceSharePct) != len(r.Evidence) {
				t.Fatalf("%s %s: %d shares for %d kernels", r.Stage, r.ID, len(r.EvidenceSharePct), len(r.Evidence))
			}
			var sum float64
			for _, s := range r.EvidenceSharePct {
				sum += s
			}
			if math.Abs(sum-r.SharePct) > 1e-9 {
				t.Errorf("%s %s: evidence shares sum to %v, the row's share is %v", r.Stage, r.ID, sum, r.SharePct)
			}
			// The stage's kernel time, summed here, scales the first share.
			var stageNS int64
			if err := w.DB.QueryRow(`SELECT sum(dur_ns) FROM kernels WHERE run_id = ? AND rank = 0 AND stage = ?`, run, r.Stage).Scan(&stageNS); err != nil {
				t.Fatal(err)
			}
			if got := r.SharePct * float64(stageNS) / 100; math.Abs(got-float64(r.RelatedNS)) > 1e-6*float64(r.RelatedNS)+1 {
				t.Errorf("%s %s: share %v of %d ns is not related %d ns", r.Stage, r.ID, r.SharePct, stageNS, r.RelatedNS)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no fuse rows on the demo runs")
	}
}
