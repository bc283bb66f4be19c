package aggregates

import (
	"context"
	"database/sql"
	"reflect"
	"testing"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestTriagePendingLeavesLargeRuns: a run of more GPU events than the
// bound is not pending for a saved triage report (its triage computes
// it), one at the bound is; the runs' GPU events are counted here from
// the kernels, memcpys and memsets stored, independently of the traces'
// counters the query sums.
func TestTriagePendingLeavesLargeRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, demoTemplate(t, "sglang-llama", "trtllm-llama"))
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
	sg, tr := runID(t, w, "sglang-llama"), runID(t, w, "trtllm-llama")
	if gpu[sg] == gpu[tr] || gpu[sg] == 0 || gpu[tr] == 0 {
		t.Fatalf("GPU events per run %v: want two different, non-zero counts", gpu)
	}
	small, large := sg, tr
	if gpu[small] > gpu[large] {
		small, large = large, small
	}
	for _, tc := range []struct {
		bound int64
		want  []int64
	}{
		{gpu[small] - 1, nil},
		{gpu[small], []int64{small}},
		{gpu[large] - 1, []int64{small}},
		{gpu[large], []int64{min(small, large), max(small, large)}},
	} {
		got, err := pendingRuns(ctx, w.DB, "triage_pending", sql.Named("max_gpu_events", tc.bound))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("bound %d (GPU events %v): pending %v, want %v", tc.bound, gpu, got, tc.want)
		}
	}
	if got, err := TriagePending(ctx, w.DB); err != nil || len(got) != 2 {
		t.Errorf("TriagePending = %v, %v; want both demo runs (%v GPU events, bound %d)", got, err, gpu, TriageMaxGPUEvents)
	}
}
