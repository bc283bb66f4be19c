package aggregates

import (
	"context"
	"database/sql"
	"reflect"
	"slices"
	"testing"
)

// TestTriagePendingLeavesLargeRuns: a run of more GPU events than the
// bound is not pending for a saved triage report (its triage computes
// it), one at the bound is; the runs' GPU events are counted here from
// the kernels, memcpys and memsets stored, independently of the traces'
// counters the query sums.
func TestTriagePendingLeavesLargeRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := threeDemoRuns(t)
	gpu := map[int64]int64{}
	rows, err := w.DB.Query(`SELECT run_id, count(*) FROM kernels GROUP BY run_id`) // every kind: kernel, memcpy, memset
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var run, n int64
		if err := rows.Scan(&run, &n); err != nil {
			t.Fatal(err)
		}
		gpu[run] = n
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	// each run's count and one less as the bound: pending are the runs of
	// that many GPU events or fewer, by run id
	var ids []int64
	counts := map[int64]bool{}
	for run, n := range gpu {
		ids = append(ids, run)
		counts[n] = true
	}
	slices.Sort(ids)
	if len(ids) != 3 || len(counts) != 3 || counts[0] {
		t.Fatalf("GPU events per run %v: want three runs of different, non-zero counts", gpu)
	}
	for _, run := range ids {
		for _, bound := range []int64{gpu[run] - 1, gpu[run]} {
			var want []int64
			for _, r := range ids {
				if gpu[r] <= bound {
					want = append(want, r)
				}
			}
			got, err := pendingRuns(ctx, w.DB, "triage_pending", sql.Named("max_gpu_events", bound))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("bound %d (GPU events %v): pending %v, want %v", bound, gpu, got, want)
			}
		}
	}
	if got, err := TriagePending(ctx, w.DB); err != nil || !reflect.DeepEqual(got, ids) {
		t.Errorf("TriagePending = %v, %v; want every demo run %v (%v GPU events, bound %d)", got, err, ids, gpu, TriageMaxGPUEvents)
	}
}
