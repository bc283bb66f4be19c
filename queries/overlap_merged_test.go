package queries

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// mergedTrace is a merged file of several ranks (kernels on devices 0, 1
// and 3, and some with no device, which take the file name's rank 3):
// random kernels of three categories on three streams per device, dense
// enough that most overlap something and every stream has neighbours.
func mergedTrace(rng *rand.Rand) string {
	names := []string{"ampere_bf16_s16816gemm_128x128", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "vectorized_elementwise_kernel"}
	var ev []string
	for _, dev := range []string{"0", "1", "3", ""} {
		for range 60 {
			args := fmt.Sprintf(`"stream":%d`, 7+rng.IntN(3))
			if dev != "" {
				args = `"device":` + dev + "," + args
			}
			ev = append(ev, fmt.Sprintf(`{"ph":"X","cat":"kernel","name":%q,"pid":0,"tid":7,"ts":%d.%03d,"dur":%d.%03d,"args":{%s}}`,
				names[rng.IntN(len(names))], 100+rng.IntN(400), rng.IntN(1000), rng.IntN(30), rng.IntN(1000), args))
		}
		if dev != "" {
			ev = append(ev, fmt.Sprintf(`{"ph":"X","cat":"gpu_user_annotation","name":"decode","pid":0,"tid":1,"ts":50,"dur":1000,"args":{"device":%s}}`, dev))
		}
	}
	return `{"traceEvents": [` + strings.Join(ev, ",\n") + `]}`
}

// TestMergedRanksSavedEqualsComputed: a merged file's ranks read from the
// overlap the finish saved (computed over the whole run, then filtered)
// equal their computation filtered to the rank first: the per-kernel
// figures with each kernel's stream neighbours, and the overlap table.
// That holds because a merged file's rank follows the device (ingest's
// link), so no overlap group (trace, stage, device) spans two ranks:
// asserted here on the ingested rows, since filtering first is exact only
// then.
func TestMergedRanksSavedEqualsComputed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "merged")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 9))
	if err := os.WriteFile(filepath.Join(dir, "merged-rank3.trace.json"), []byte(mergedTrace(rng)), 0o644); err != nil {
		t.Fatal(err)
	}
	w := schematest.Open(t, schematest.Migrated(t))
	db := w.DB
	res, err := ingest.Ingest(ctx, w, []string{dir}, ingest.Options{Jobs: 1})
	if err == nil && res.Failed() > 0 {
		err = res.Files[0].Err
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := aggregates.Finish(ctx, db, catalog.Default(), DefaultMinDurNS); err != nil {
		t.Fatal(err)
	}
	var run int64
	var ranks, mixed, neighbours int
	if err := db.QueryRow(`SELECT any_value(run_id), count(DISTINCT rank),
		(SELECT count(*) FROM (SELECT trace_id, device FROM kernels GROUP BY ALL HAVING count(DISTINCT rank) > 1)),
		count(*) FILTER (WHERE prev_kernel_id IS NOT NULL)
		FROM kernel_overlap_store`).Scan(&run, &ranks, &mixed, &neighbours); err != nil {
		t.Fatal(err)
	}
	if ranks != 3 || mixed != 0 || neighbours < 100 {
		t.Fatalf("the merged file gave %d ranks (want 3: devices 0, 1 and 3 with the no-device kernels), %d devices of two ranks, %d kernels with a neighbour saved", ranks, mixed, neighbours)
	}
	var fresh bool
	if err := db.QueryRow(`SELECT _overlap_current($1)`, run).Scan(&fresh); err != nil || !fresh {
		t.Fatalf("the finish saved no current overlap (%v)", err)
	}
	// start ranks count the whole run's starts in the saved copy, the
	// rank's in the computation: other numbers, same meaning
	const noRanks = "(SELECT * EXCLUDE (start_rank, starts_before_end) FROM kernel_overlap_%s(%d, rank := %d))"
	type tables struct{ kernels, fromSaved, savedRows string }
	saved := map[int64]tables{}
	// ranks 0 (device 0) and 3 (device 3 and the kernels without one): rank
	// 1 is another rank 0, and each of eight changes to the rank filters
	// (the per-kernel overlap computed and cached, the saved rows and
	// their kernels; <= or >= for =) failed on 0 or 3 whenever on 1
	for _, r := range []int64{0, 3} {
		rank := sql.NullInt64{Int64: r, Valid: true}
		fromSaved, err := OverlapByKernel(ctx, db, OverlapByKernelParams{Run: run, Rank: rank, OverlapSaved: sql.NullBool{Bool: true, Valid: true}})
		if err != nil {
			t.Fatal(err)
		}
		rows, fromRows, err := OverlapByKernelCached(ctx, db, OverlapByKernelParams{Run: run, Rank: rank})
		if err != nil || !fromRows {
			t.Fatalf("rank %d: the finish saved no current overlap rows (%v)", r, err)
		}
		saved[r] = tables{dumpOverlap(t, db, fmt.Sprintf(noRanks, "cached", run, r)), fmt.Sprint(fromSaved), fmt.Sprint(rows)}
	}
	// Without the saved copy every reader computes, filtering first.
	if _, err := db.Exec(`DELETE FROM kernel_overlap_runs`); err != nil {
		t.Fatal(err)
	}
	for _, r := range []int64{0, 3} {
		computed, err := OverlapByKernel(ctx, db, OverlapByKernelParams{Run: run, Rank: sql.NullInt64{Int64: r, Valid: true}})
		if err != nil {
			t.Fatal(err)
		}
		want := tables{dumpOverlap(t, db, fmt.Sprintf(noRanks, "for", run, r)), fmt.Sprint(computed), fmt.Sprint(computed)}
		if got := saved[r]; got != want || strings.Count(want.kernels, "\n") < 50 || len(computed) == 0 {
			t.Errorf("rank %d: read from what the finish saved:\n%+v\ncomputed for the rank:\n%+v", r, got, want)
		}
	}
}
