package queries

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"testing"
)

// TestTriageGPUEvents: every (stage, rank) pair of the run appears, with 0
// for a pair that has no GPU events, including a stage known only from a
// trace's file-level stage.
func TestTriageGPUEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(1, "r")
	f.trace(1, 1, 0, "decode", "formal")
	f.trace(2, 1, 1, "decode", "formal")
	f.trace(3, 1, 1, "unknown", "formal") // a file with no GPU events at all
	// a mixed file whose kernels all took per-kernel stages: "mixed" is no
	// stage of the run (the TokenSpeed demo's "no GPU events: mixed")
	f.trace(4, 1, 0, "mixed", "formal")
	f.exec(`UPDATE traces SET kernel_events = 1 WHERE trace_id IN (1, 2, 4)`)
	f.name(1, "k", "k", "", "other", "other")
	f.kernelsOn(0, 7,
		kernel{ID: 1, Trace: 1, Run: 1, Rank: 0, Stage: "decode", Name: 1, Dur: 1},
		kernel{ID: 2, Trace: 1, Run: 1, Rank: 0, Stage: "prefill", Name: 1, Dur: 1},
		kernel{ID: 3, Trace: 1, Run: 1, Rank: 0, Stage: "prefill", Name: 1, Dur: 1},
		kernel{ID: 4, Trace: 2, Run: 1, Rank: 1, Stage: "decode", Name: 1, Dur: 1},
		kernel{ID: 5, Trace: 4, Run: 1, Rank: 0, Stage: "decode", Name: 1, Dur: 1},
	)
	rows, err := TriageGPUEvents(context.Background(), f.db, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := "[{prefill 0 2} {prefill 1 0} {decode 0 2} {decode 1 1} {unknown 0 0} {unknown 1 0}]"
	if got := fmt.Sprint(rows); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestTriageRunLookups covers run lookup by id and label, the traces list
// and the runs holding given traces.
func TestTriageRunLookups(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.run(1, "b-run")
	f.run(2, "a-run")
	f.run(3, "c-run")
	f.trace(1, 1, 1, "decode", "formal")
	f.trace(2, 1, 0, "decode", "formal")
	f.trace(3, 1, 0, "prefill", "formal")
	f.trace(4, 2, 0, "decode", "formal")
	f.trace(5, 3, 0, "decode", "formal")
	f.exec(`UPDATE runs SET model = 'm', tp_size = 2, framework_evidence = 'server_args.json' WHERE run_id = 1`)
	r, err := TriageRun(ctx, f.db, sql.NullInt64{}, sql.NullString{String: "b-run", Valid: true})
	if err != nil || r == nil || r.RunID != 1 || r.Model != "m" || r.TP.Int64 != 2 || r.DP.Valid ||
		r.FrameworkEvidence != "server_args.json" || r.Framework != "sglang" {
		t.Errorf("by label: %+v %v", r, err)
	}
	r, err = TriageRun(ctx, f.db, rankOf(2), sql.NullString{})
	if err != nil || r == nil || r.Label != "a-run" || r.Model != "unknown" {
		t.Errorf("by id: %+v %v", r, err)
	}
	r, err = TriageRun(ctx, f.db, sql.NullInt64{}, sql.NullString{String: "nope", Valid: true})
	if err != nil || r != nil {
		t.Errorf("missing: %+v %v", r, err)
	}
	traces, err := TriageTraces(ctx, f.db, 1)
	if err != nil {
		t.Fatal(err)
	}
	var order []int64
	for _, tr := range traces {
		order = append(order, tr.TraceID)
	}
	if fmt.Sprint(order) != "[3 2 1]" { // rank 0 prefill, rank 0 decode, rank 1
		t.Errorf("trace order %v", order)
	}
	runs, err := TriageRunsOfTraces(ctx, f.db, []int64{5, 1, 4, 2})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(runs) != "[{2 a-run} {1 b-run} {3 c-run}]" {
		t.Errorf("runs of traces: %v", runs)
	}
	runs, err = TriageRunsOfTraces(ctx, f.db, nil)
	if err != nil || len(runs) != 0 {
		t.Errorf("no traces: %v %v", runs, err)
	}
}

// TestTriageDemoConsistent runs the whole gather on every demo run but
// sglang-mapping (another sglang-llama here: the gather asks it nothing as
// a mapping run) and checks that figures computed by different queries
// agree: the kernel table's stage totals, the busy query's summed kernel
// time, the roll-up and the coverage denominators.
func TestTriageDemoConsistent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := demoDB(t)
	for label, run := range demoRuns(t, db) {
		if label == "sglang-mapping" {
			// sglang-llama's deployment, eager again, asked here as a
			// run of its own like it (bench/README.md, "Fifty-ninth
			// figures")
			continue
		}
		t.Run(label, func(t *testing.T) {
			t.Parallel()
			// every rank; sglang-llama (two ranks, two stages) rank 0 alone
			// first. A gather of rank 0 costs as much as every rank's, and
			// each of the four runs of two ranks failed alike when the
			// kernel table, the busy query or the coverage lost the rank.
			passes := []sql.NullInt64{{}}
			if label == "sglang-llama" {
				var ranks int
				if err := db.QueryRow(`SELECT count(DISTINCT rank) FROM traces WHERE run_id = ?`, run).Scan(&ranks); err != nil || ranks < 2 {
					t.Fatalf("%s: %d ranks (%v), want two: rank 0 alone would prove nothing", label, ranks, err)
				}
				passes = []sql.NullInt64{rankOf(0), {}}
			}
			for _, rank := range passes {
				d, err := Triage(ctx, db, TriageParams{Run: run, Rank: rank, MinShare: 1, OverlapRows: 10})
				if err != nil {
					t.Fatalf("%s: %v", label, err)
				}
				if !rank.Valid {
					// the straggler tables, which a run of one rank skips,
					// are what their queries give
					sp := StragglerParams{Run: run}
					ranks, err := StragglerRanks(ctx, db, sp)
					if err != nil {
						t.Fatal(err)
					}
					sites, err := StragglerSites(ctx, db, sp)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(d.StragglerRanks, ranks) || !reflect.DeepEqual(d.StragglerSites, sites) {
						t.Errorf("%s: straggler ranks %+v sites %+v, their queries %+v %+v", label, d.StragglerRanks, d.StragglerSites, ranks, sites)
					}
				}
				kt := map[string]int64{}
				for _, r := range d.Kernels {
					kt[r.Stage] = r.StageKernelNS
				}
				busy := map[string]int64{}
				for _, r := range d.StageBusy {
					if r.Level == "stage" {
						busy[r.Stage] = r.KernelNS
						if r.BusyNS > r.KernelNS || r.BusyNS <= 0 || r.WindowNS < r.BusyNS/int64(max(1, r.Streams)) {
							t.Errorf("%s %s: busy %d of kernel %d, window %d", label, r.Stage, r.BusyNS, r.KernelNS, r.WindowNS)
						}
					}
				}
				cov := map[string]int64{}
				for _, r := range d.Coverage {
					if r.Stage.Valid {
						cov[r.Stage.String] = r.KernelNS
					}
				}
				if fmt.Sprint(kt) != fmt.Sprint(busy) || fmt.Sprint(kt) != fmt.Sprint(cov) {
					t.Errorf("%s rank %v: stage totals differ: kernel table %v, busy %v, coverage %v", label, rank, kt, busy, cov)
				}
				if d.Run.Label != label || len(d.Traces) == 0 || len(d.GPUEvents) == 0 || len(d.KnownPaths) != len(d.Overlap) {
					t.Errorf("%s: header %+v, %d traces", label, d.Run, len(d.Traces))
				}
				for _, s := range d.Sites {
					if s.Match != "self" && s.Match != "graph-replay" {
						t.Errorf("%s: single-trace site row with match %q", label, s.Match)
					}
				}
			}
		})
	}
}
