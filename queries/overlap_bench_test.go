package queries

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/tracehouse/tracehouse/aggregates"
)

// Benchmark data shapes, both 1 M kernels of run 1 (4 traces: 2 ranks x 2
// stages, 250 k kernels each) on 3 streams, generated in SQL with range():
//
//	dense    each stream issues a kernel every 4 us lasting 0.3-5.3 us:
//	         kernels overlap across streams all the time and on their own
//	         stream often (PDL); the worst case for the sweep and the pairs
//	serving  90% of kernels back to back on one stream every 3 us lasting
//	         1-3.5 us (a fifth overlap their successor, as with PDL), 5% on
//	         a communication stream lasting 2-12 us, 5% on a copy stream
//
// Every 997th kernel has zero length. Run 2 (one more trace) is there to be
// filtered out.
var benchShapes = map[string]string{
	"dense": `1000000000 + (n // 3) * 4000 + hash(n) % 1000 AS ts,
		CASE WHEN n % 997 = 0 THEN 0 ELSE 300 + hash(n * 7 + t) % 5000 END AS dur,
		[7, 20, 30][n % 3 + 1] AS stream`,
	"serving": `1000000000 + n * 3000 AS ts,
		CASE WHEN n % 997 = 0 THEN 0
		     WHEN n % 20 = 0 THEN 2000 + hash(n * 7 + t) % 10000
		     ELSE 1000 + hash(n * 7 + t) % 2500 END AS dur,
		CASE n % 20 WHEN 0 THEN 20 WHEN 1 THEN 30 ELSE 7 END AS stream`,
}

func fillBench(tb testing.TB, db *sql.DB, shape string) {
	tb.Helper()
	f := fixture{tb, db}
	f.run(1, "bench")
	f.run(2, "other")
	for tr := 1; tr <= 5; tr++ {
		run, stage := 1, "prefill"
		if tr == 5 {
			run = 2
		}
		if (tr-1)/2%2 == 1 {
			stage = "decode"
		}
		f.trace(tr, run, (tr-1)%2, stage, "formal")
	}
	f.exec(`INSERT INTO sites (site_id, name, file, line, func, display, framework, is_wrapper)
		SELECT i, 'f' || i, 'python/sglang/m' || (i % 4) || '.py', i, 'fn' || (i % 5),
		       'fn' || (i % 5) || ' @ python/sglang/m' || (i % 4) || '.py:' || i, 'sglang', false
		FROM range(1, 21) r(i)`)
	f.exec(`INSERT INTO kernel_names (name_id, name, short_name, base_name, family, category)
		SELECT i, 'kernel_' || i, 'kernel_' || i, 'kernel_' || (i % 40),
		       ['gemm','attention','communication','memcpy','norm','rope','elementwise','other'][i % 8 + 1],
		       ['compute','compute','communication','memory','elementwise','elementwise','elementwise','other'][i % 8 + 1]
		FROM range(1, 65) r(i)`)
	f.exec(`INSERT INTO kernels (kernel_id, trace_id, run_id, rank, stage, name_id, kind,
			ts_ns, dur_ns, device, stream, graph_launch, site_id)
		SELECT t * 4294967296 + n, t, CASE WHEN t <= 4 THEN 1 ELSE 2 END, (t - 1) % 2,
		       CASE WHEN (t - 1) // 2 % 2 = 0 THEN 'prefill' ELSE 'decode' END,
		       (1 + hash(n * 13 + t) % 64)::INTEGER, 'kernel', ts, dur,
		       (t - 1) % 2, stream, false,
		       CASE WHEN n % 5 = 0 THEN NULL ELSE (1 + hash(n) % 20)::INTEGER END
		FROM (SELECT t, n, ` + benchShapes[shape] + `
		      FROM range(1, 6) r1(t), range(0, 250000) r2(n))`)
}

// BenchmarkOverlap1M times what triage runs for the overlap section of one
// run of 1 M kernels: OverlapByKernel (all ranks, and rank 0 alone, as
// triage defaults to) and StageBusy, on both data shapes, computing the
// overlap and then reading a copy saved by aggregates.SaveOverlap.
func BenchmarkOverlap1M(b *testing.B) {
	for _, shape := range []string{"serving", "dense"} {
		db := newMemoryFixture(b).db
		start := time.Now()
		fillBench(b, db, shape)
		b.Logf("%s: generated 1.25 M kernels in %v", shape, time.Since(start))
		benchOverlap(b, db, shape)
		// The same after aggregates.SaveOverlap (what ingest can do once).
		start = time.Now()
		if err := aggregates.SaveOverlap(context.Background(), db, 1); err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: aggregates.SaveOverlap took %v", shape, time.Since(start))
		benchOverlap(b, db, shape+"-stored")
	}
}

func benchOverlap(b *testing.B, db *sql.DB, shape string) {
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		rank sql.NullInt64
	}{{"all-ranks", sql.NullInt64{}}, {"rank0", sql.NullInt64{Int64: 0, Valid: true}}} {
		b.Run(shape+"/"+bc.name, func(b *testing.B) {
			for b.Loop() {
				rows, err := OverlapByKernel(ctx, db, OverlapByKernelParams{Run: 1, Rank: bc.rank, MinShare: 1})
				if err != nil {
					b.Fatal(err)
				}
				if len(rows) == 0 {
					b.Fatal("no rows")
				}
				if _, err := StageBusy(ctx, db, StageBusyParams{Run: 1, Rank: bc.rank}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
