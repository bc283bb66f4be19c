package queries

import (
	"context"
	"testing"

	"github.com/tracehouse/tracehouse/aggregates"
)

// TestOverlapRowsGraphReplaySite: a kernel name with no launch site of its
// own, replayed by CUDA graphs, takes the site of its graph launches that
// holds most of its time ("graph replay @ ..."), each run its own
// launches', computed for one run and saved for several at once
// (aggregates.SaveOverlapRows). The two runs' launches sit at different
// frames, and the launches joined are only the runs' own (a filter that
// kept the wrong traces' launches leaves the name unmapped).
func TestOverlapRowsGraphReplaySite(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(1, "graphs")
	f.run(2, "graphs too")
	f.trace(1, 1, 0, "decode", "formal")
	f.trace(2, 2, 0, "decode", "formal")
	f.name(1, "graph_k", "graph_k", "", "gemm", "compute")
	f.name(2, "eager_k", "eager_k", "", "norm", "elementwise")
	f.site(1, "/s/python/sglang/srt/layers/norm.py", 10, "forward", "python/sglang/srt/layers/norm.py")
	f.site(2, "/s/python/sglang/srt/cuda_graph_runner.py", 300, "replay", "python/sglang/srt/cuda_graph_runner.py")
	f.site(3, "/s/python/sglang/srt/scheduler.py", 50, "step", "python/sglang/srt/scheduler.py")
	f.kernelsOn(0, 7,
		// run 1: graph_k 100 ns under a launch at site 3, 300 ns under one at site 2
		kernel{ID: 1<<32 + 1, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 0, Dur: 100},
		kernel{ID: 1<<32 + 2, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 100, Dur: 300},
		kernel{ID: 1<<32 + 3, Trace: 1, Run: 1, Stage: "decode", Name: 2, TS: 400, Dur: 50, Site: 1},
		// run 2: graph_k 500 ns under a launch at site 3
		kernel{ID: 2<<32 + 1, Trace: 2, Run: 2, Stage: "decode", Name: 1, TS: 0, Dur: 500},
		kernel{ID: 2<<32 + 2, Trace: 2, Run: 2, Stage: "decode", Name: 2, TS: 500, Dur: 50, Site: 1},
	)
	f.exec(`INSERT INTO launches (launch_id, trace_id, name, ts_ns, dur_ns, site_id) VALUES
		((1::BIGINT << 32) + 11, 1, 'cudaGraphLaunch', 0, 5, 3),
		((1::BIGINT << 32) + 12, 1, 'cudaGraphLaunch', 90, 5, 2),
		((2::BIGINT << 32) + 11, 2, 'cudaGraphLaunch', 0, 5, 3)`)
	f.exec(`UPDATE kernels SET graph_launch = true, launch_id = kernel_id + 10 WHERE name_id = 1`)

	want := map[int64]string{
		1: "graph replay @ python/sglang/srt/cuda_graph_runner.py:300 replay",
		2: "graph replay @ python/sglang/srt/scheduler.py:50 step",
	}
	const eager = "forward @ python/sglang/srt/layers/norm.py:10"
	ctx := context.Background()
	for run, scope := range want {
		rows, err := OverlapByKernel(ctx, f.db, OverlapByKernelParams{Run: run})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][2]string{}
		for _, r := range rows {
			got[r.Kernel] = [2]string{r.Scope, r.ScopeMatch}
		}
		if got["graph_k"] != [2]string{scope, "graph-replay"} || got["eager_k"] != [2]string{eager, "self"} {
			t.Errorf("run %d computed: %v, want graph_k %q (graph-replay), eager_k %q (self)", run, got, scope, eager)
		}
	}

	for _, run := range []int64{1, 2} {
		if err := aggregates.SaveOverlap(ctx, f.db, run); err != nil {
			t.Fatal(err)
		}
	}
	if err := aggregates.SaveOverlapRows(ctx, f.db, []int64{1, 2}, DefaultMinDurNS); err != nil {
		t.Fatal(err)
	}
	rows, err := f.db.Query(`SELECT run_id, kernel, scope, scope_match FROM overlap_row_store ORDER BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	saved := map[int64]map[string][2]string{}
	for rows.Next() {
		var run int64
		var kernel, scope, match string
		if err := rows.Scan(&run, &kernel, &scope, &match); err != nil {
			t.Fatal(err)
		}
		if saved[run] == nil {
			saved[run] = map[string][2]string{}
		}
		saved[run][kernel] = [2]string{scope, match}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for run, scope := range want {
		got := saved[run]
		if len(got) != 2 || got["graph_k"] != [2]string{scope, "graph-replay"} || got["eager_k"] != [2]string{eager, "self"} {
			t.Errorf("run %d saved: %v, want graph_k %q (graph-replay), eager_k %q (self)", run, got, scope, eager)
		}
	}
}
