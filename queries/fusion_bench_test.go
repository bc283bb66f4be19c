package queries

import (
	"context"
	"database/sql"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/synth"
)

// BenchmarkFusionMatches times the fuse-pattern query on generated traces
// with the real kernel, site and op vocabulary of each framework (so the
// broad catalog keywords hit as they do on real traces): one eager run per
// framework of FUSION_BENCH_MB megabytes of JSON per rank (default 100), two
// ranks, all stages. It reports the GPU events matched over.
//
//	FUSION_BENCH_MB=400 go test ./queries -run XXX -bench BenchmarkFusionMatches -benchtime 3x
func BenchmarkFusionMatches(b *testing.B) {
	mb := int64(100)
	if v, err := strconv.ParseInt(os.Getenv("FUSION_BENCH_MB"), 10, 64); err == nil && v > 0 {
		mb = v
	}
	ctx := context.Background()
	for _, c := range []struct {
		framework, model string
		moe              bool
	}{
		{synth.SGLang, "meta-llama/Llama-3.1-8B-Instruct", false},
		{synth.TokenSpeed, "deepseek-ai/DeepSeek-V3", true},
	} {
		b.Run(c.framework, func(b *testing.B) {
			dir := b.TempDir()
			if _, err := synth.Generate(synth.Options{Framework: c.framework, Dir: dir, Run: "bench", Model: c.model,
				Ranks: 2, Layers: 32, MoE: c.moe, Gzip: true, TargetBytes: mb << 20, Seed: 7}); err != nil {
				b.Fatal(err)
			}
			w, err := schema.Open(ctx, schema.Memory, schema.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			if _, err := ingest.Ingest(ctx, w, []string{dir}, ingest.Options{}); err != nil {
				b.Fatal(err)
			}
			if err := ingest.InstallCatalog(ctx, w.DB, catalog.Default()); err != nil {
				b.Fatal(err)
			}
			var run, events int64
			if err := w.DB.QueryRowContext(ctx, `SELECT min(run_id), count(*) FROM kernels`).Scan(&run, &events); err != nil {
				b.Fatal(err)
			}
			b.Logf("%s: %d GPU events", c.framework, events)
			for _, rank := range []sql.NullInt64{{Int64: 0, Valid: true}, {}} {
				start := time.Now()
				var rows []FusionMatchesRow
				for range b.N {
					rows, err = FusionMatches(ctx, w.DB, FusionMatchesParams{Run: run, Rank: rank})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.Logf("rank %v: %d rows, %v per query", rank, len(rows), time.Since(start)/time.Duration(b.N))
			}
		})
	}
}
