package aggregates

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestStepsStale: runs whose steps came from annotations are current for
// "" and stale for a --steps-by pattern until recomputed with it.
func TestStepsStale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := threeDemoRuns(t)
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
	if len(runs) != 3 {
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
	// two copies of one warehouse: the same trace and kernel ids in both
	template := threeDemoTemplate(t)
	read, stored := schematest.Open(t, template), schematest.Open(t, template)
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

// TestStepsKeepSweptComm: the communication overlap rows the overlap's
// sweep saved (with their record, comm_overlap_runs) are _comm_parts_for's;
// the step aggregates' save keeps them while the record holds the run's
// current overlap fingerprint, and computes them (forgetting the record)
// for a run without one or with a stale one, in a finish that did not
// sweep the run's overlap (finishPlan.swept) and alone; the rows each way
// equal the library's definition. A saved row changed by hand shows which rows were
// kept.
func TestStepsKeepSweptComm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := finishedThreeDemoRuns(t).DB
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	// differ counts the rows of run where the saved copy and the
	// definition differ.
	differ := func(run int) int {
		t.Helper()
		return count(`SELECT count(*) FROM (
			(SELECT * FROM comm_overlap_store WHERE run_id = $1 EXCEPT ALL SELECT * FROM _comm_parts_for($1))
			UNION ALL (SELECT * FROM _comm_parts_for($1) EXCEPT ALL SELECT * FROM comm_overlap_store WHERE run_id = $1))`, run)
	}
	for run := 1; run <= 3; run++ {
		if n := count(`SELECT count(*) FROM comm_overlap_store WHERE run_id = $1`, run); n == 0 {
			t.Fatalf("run %d: no saved rows", run)
		}
		if d := differ(run); d != 0 {
			t.Errorf("run %d: swept rows differ from _comm_parts_for in %d rows", run, d)
		}
		if n := count(`SELECT count(*) FROM comm_overlap_runs WHERE run_id = $1 AND fingerprint = _overlap_fingerprint($1)`, run); n != 1 {
			t.Errorf("run %d: %d current sweep records", run, n)
		}
	}
	exec(`UPDATE comm_overlap_store SET overlap_ns = overlap_ns + 1`)
	exec(`DELETE FROM comm_overlap_runs WHERE run_id = 2`)
	exec(`UPDATE comm_overlap_runs SET fingerprint = fingerprint + 1 WHERE run_id = 3`)
	exec(`DELETE FROM step_store_runs`)
	// A finish: the step save's, told which runs this finish swept (none:
	// their overlap is current), asks of each.
	if err := Finish(ctx, db, catalog.Default(), 5000); err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT count(*) FROM step_store_runs`); n != 3 {
		t.Fatalf("%d runs with saved step aggregates after the finish, want 3", n)
	}
	if d := differ(1); d == 0 {
		t.Error("run 1: the step save computed the rows its current sweep record vouches for")
	}
	for run := 2; run <= 3; run++ {
		if d := differ(run); d != 0 {
			t.Errorf("run %d: the step save kept rows no current record vouches for (%d differ)", run, d)
		}
		if n := count(`SELECT count(*) FROM comm_overlap_runs WHERE run_id = $1`, run); n != 0 {
			t.Errorf("run %d: %d sweep records left after the step save computed its rows", run, n)
		}
	}
	if n := count(`SELECT count(*) FROM (SELECT unnest([1, 2, 3]) AS r) WHERE _steps_current(r)`); n != 3 {
		t.Errorf("%d runs with current step aggregates, want 3", n)
	}
	// One run alone (its batch of one, $run): the same.
	exec(`UPDATE comm_overlap_store SET overlap_ns = overlap_ns + 1 WHERE run_id = 2`)
	if err := SaveSteps(ctx, db, 2); err != nil {
		t.Fatal(err)
	}
	if d := differ(2); d != 0 {
		t.Errorf("run 2 alone: %d rows differ", d)
	}
	// Saving the overlap again sweeps the rows and records them.
	if err := SaveOverlap(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	if d := differ(1); d != 0 {
		t.Errorf("run 1: swept again, %d rows differ", d)
	}
	if n := count(`SELECT count(*) FROM comm_overlap_runs WHERE run_id = 1 AND fingerprint = _overlap_fingerprint(1)`); n != 1 {
		t.Errorf("run 1: %d current sweep records", n)
	}
}
