package aggregates

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/tracehouse/tracehouse/ingest"
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
	if _, err := ingest.Ingest(ctx, w, []string{"../testdata/demo/sglang-llama", "../testdata/demo/trtllm-llama"}, ingest.Options{}); err != nil {
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

// TestReadStepsEqualsStoredRecompute: the steps ReadSteps finds for one
// connection (TEMP tables over a warehouse it does not write) are, row for
// row, the steps and kernel steps RecomputeSteps stores; the stored ones
// stay as they were, and other connections see them.
func TestReadStepsEqualsStoredRecompute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	open := func() *schema.Warehouse {
		w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		// one job: the same trace and kernel ids in both warehouses
		if _, err := ingest.Ingest(ctx, w, []string{"../testdata/demo/sglang-llama", "../testdata/demo/trtllm-llama"}, ingest.Options{Jobs: 1}); err != nil {
			t.Fatal(err)
		}
		return w
	}
	read, stored := open(), open()
	const by = "SoftMax"
	var runs []int64
	rows, err := read.DB.QueryContext(ctx, `SELECT run_id FROM runs ORDER BY run_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		runs = append(runs, id)
	}
	rows.Close()
	for _, r := range runs {
		if err := RecomputeSteps(ctx, stored.DB, r, by); err != nil {
			t.Fatal(err)
		}
	}
	const stepsQ = `SELECT string_agg(concat_ws(',', trace_id, step, source, name, stage, gpu_ts_ns, gpu_end_ns, cpu_ts_ns, cpu_end_ns, edge), ';' ORDER BY trace_id, step) FROM steps`
	const kernelsQ = `SELECT count(*), count(step), bit_xor(hash(kernel_id, step)) FROM kernels`
	type snapshot struct {
		steps          string
		n, with, hashv uint64
	}
	snap := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) snapshot {
		var s snapshot
		if err := q.QueryRowContext(ctx, stepsQ).Scan(&s.steps); err != nil {
			t.Fatal(err)
		}
		if err := q.QueryRowContext(ctx, kernelsQ).Scan(&s.n, &s.with, &s.hashv); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := snap(read.DB)
	conn, err := ReadSteps(ctx, read.DB, runs, by)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got, want := snap(conn), snap(stored.DB)
	if got != want {
		t.Errorf("ReadSteps gives steps %.200q, kernels %d/%d/%d;\nRecomputeSteps stores %.200q, %d/%d/%d",
			got.steps, got.n, got.with, got.hashv, want.steps, want.n, want.with, want.hashv)
	}
	if got == before {
		t.Errorf("--steps-by %s found the same steps as the annotations", by)
	}
	if after := snap(read.DB); after != before {
		t.Errorf("ReadSteps changed the stored steps")
	}
	if stale, err := StepsStale(ctx, read.DB, runs, by); err != nil || len(stale) != len(runs) {
		t.Errorf("stored steps after ReadSteps: stale %v %v, want every run", stale, err)
	}
}
