package ingest

import (
	"context"
	"slices"
	"testing"

	"github.com/tracehouse/tracehouse/schema"
)

// TestStepsStale: runs whose steps came from annotations are current for
// "" and stale for a --steps-by pattern until recomputed with it.
func TestStepsStale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := Ingest(ctx, w, []string{"../testdata/demo/sglang-llama", "../testdata/demo/trtllm-llama"}, Options{}); err != nil {
		t.Fatal(err)
	}
	var runs []int64
	rows, err := w.DB.QueryContext(ctx, `SELECT run_id FROM runs ORDER BY run_id DESC`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, id)
	}
	rows.Close()
	if len(runs) != 2 {
		t.Fatalf("runs %v", runs)
	}
	if got, err := StepsStale(ctx, w.DB, runs, ""); err != nil || len(got) != 0 {
		t.Errorf("annotation steps: stale %v %v", got, err)
	}
	const by = "nvjet|gemm|Kernel"
	if got, err := StepsStale(ctx, w.DB, runs, by); err != nil || !slices.Equal(got, runs) {
		t.Errorf("--steps-by: stale %v %v, want %v in that order", got, err, runs)
	}
	if err := RecomputeSteps(ctx, w.DB, runs[0], by); err != nil {
		t.Fatal(err)
	}
	if got, err := StepsStale(ctx, w.DB, runs, by); err != nil || !slices.Equal(got, runs[1:]) {
		t.Errorf("after recomputing %d: stale %v %v", runs[0], got, err)
	}
}
