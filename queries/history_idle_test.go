package queries

import (
	"context"
	"database/sql"
	"testing"
)

// TestHistoryIdleMetrics: historyDB's kernels given launches so that each
// gap has a known cause (threshold 30 µs; every gap is shorter):
//
//	run 1 step 1: gap [10,20) before gemm, launched at 15 (after the GPU
//	              went idle): host-bound 10
//	run 1 step 2: gap [112,120) before allreduce, launched at 105 (before):
//	              launch latency 8; gap [125,130) before gemm, no launch:
//	              other 5
//	run 1 step 3: no gap
//	run 2 step 1: gap [20,30) before gemm, launched at 25: host-bound 10
//
// The idle metrics give those per step, computed and from the saved rows,
// and idle is the step time minus busy time.
func TestHistoryIdleMetrics(t *testing.T) {
	t.Parallel()
	f := historyDB(t)
	f.exec(`INSERT INTO launches (launch_id, trace_id, name, ts_ns, dur_ns, pid, tid) VALUES
		(101, 1, 'cudaLaunchKernel', 15, 2, 1, 1),
		(102, 1, 'cudaLaunchKernel', 105, 2, 1, 1),
		(103, 2, 'cudaLaunchKernel', 25, 2, 1, 1)`)
	f.exec(`UPDATE kernels SET launch_id = CASE kernel_id WHEN 2 THEN 101 WHEN 4 THEN 102 WHEN 10 THEN 103 END
		WHERE kernel_id IN (2, 4, 10)`)
	str := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	cases := []struct {
		metric string
		values map[int64][]int64
		share  map[int64]float64 // of the step time: run 1 140, run 2 60
	}{
		{MetricIdle, map[int64][]int64{1: {10, 13, 0}, 2: {10}}, map[int64]float64{1: 100 * 23.0 / 140, 2: 100 * 10.0 / 60}},
		{MetricIdleHostBound, map[int64][]int64{1: {10, 0, 0}, 2: {10}}, map[int64]float64{1: 100 * 10.0 / 140, 2: 100 * 10.0 / 60}},
		{MetricIdleLaunchLatency, map[int64][]int64{1: {0, 8, 0}, 2: {0}}, map[int64]float64{1: 100 * 8.0 / 140, 2: 0}},
		{MetricIdleSync, map[int64][]int64{1: {0, 0, 0}, 2: {0}}, map[int64]float64{1: 0, 2: 0}},
		{MetricIdleGraphInternal, map[int64][]int64{1: {0, 0, 0}, 2: {0}}, map[int64]float64{1: 0, 2: 0}},
		{MetricIdleOther, map[int64][]int64{1: {0, 5, 0}, 2: {0}}, map[int64]float64{1: 100 * 5.0 / 140, 2: 0}},
	}
	check := func(fresh []int64) {
		t.Helper()
		for _, c := range cases {
			rows, err := HistorySteps(context.Background(), f.db, HistoryStepsParams{Runs: []int64{1, 2}, FreshRuns: fresh,
				Metric: str(c.metric)})
			if err != nil {
				t.Fatalf("%s: %v", c.metric, err)
			}
			got := map[int64][]int64{}
			for _, r := range rows {
				got[r.RunID] = append(got[r.RunID], r.ValueNS)
				if !r.SharePct.Valid || !near(r.SharePct.Float64, c.share[r.RunID]) {
					t.Errorf("%s (saved %v): run %d share %v, want %v", c.metric, fresh, r.RunID, r.SharePct, c.share[r.RunID])
				}
			}
			for run, want := range c.values {
				if !equalInts(got[run], want) {
					t.Errorf("%s (saved %v): run %d %v, want %v", c.metric, fresh, run, got[run], want)
				}
			}
		}
	}
	check(nil)
	for _, run := range []int{1, 2} {
		f.exec(`INSERT INTO step_kernel_store SELECT * FROM step_kernels_for(?)`, run)
		f.exec(`INSERT INTO step_total_store SELECT * FROM step_totals_for(?)`, run)
		f.exec(`INSERT INTO idle_step_store SELECT * FROM _idle_steps_for(?)`, run)
		f.exec(`INSERT INTO step_store_runs VALUES (?, _steps_fingerprint(?), now()::TIMESTAMP)`, run, run)
	}
	check([]int64{1, 2})
	// What was read is the saved copy.
	f.exec(`UPDATE idle_step_store SET host_bound_ns = host_bound_ns + 1000 WHERE run_id = 2 AND scope = 'device'`)
	rows, err := HistorySteps(context.Background(), f.db, HistoryStepsParams{Runs: []int64{2}, FreshRuns: []int64{2},
		Metric: str(MetricIdleHostBound)})
	if err != nil || len(rows) != 1 || rows[0].ValueNS != 1010 {
		t.Errorf("host-bound, run 2 from the store: %+v %v", rows, err)
	}
}
