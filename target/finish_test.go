package target

import (
	"context"
	"database/sql"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

func TestMain(m *testing.M) {
	os.Exit(schematest.Main(m))
}

// runRank is one rank of one run.
type runRank struct{ run, rank int64 }

// ingestedDemo is a template of testdata/demo ingested, not finished: every
// run but sglang-mapping, the eager run of sglang-llama's deployment (two
// ranks, two stages, a mapping role from its server args, as sglang-llama),
// whose finish and saved copies these tests compared as they did
// sglang-llama's (bench/README.md, "Fifty-ninth figures").
func ingestedDemo(t *testing.T) string {
	t.Helper()
	return schematest.Template(t, "ingested-demo", func(ctx context.Context, w *schema.Warehouse) error {
		_, err := ingest.Ingest(ctx, w, []string{"../testdata/demo/sglang-formal", "../testdata/demo/sglang-llama",
			"../testdata/demo/tokenspeed-deepseek", "../testdata/demo/trtllm-llama", "../testdata/demo/vllm-qwen-moe"}, ingest.Options{})
		return err
	})
}

// finishedDemo is ingestedDemo's runs finished (Finish) once per
// test binary, copied for t alone (tests change it), with every (run,
// rank) it holds.
func finishedDemo(t *testing.T) (*schema.Warehouse, []runRank) {
	t.Helper()
	w := schematest.Open(t, schematest.Derived(t, "finished-demo", ingestedDemo(t), func(ctx context.Context, w *schema.Warehouse) error {
		return Finish(ctx, w.DB, catalog.Default())
	}))
	rows, err := w.DB.Query(`SELECT DISTINCT run_id, rank FROM kernels ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var pairs []runRank
	for rows.Next() {
		var p runRank
		if err := rows.Scan(&p.run, &p.rank); err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(pairs) < 6 {
		t.Fatalf("only %d (run, rank) pairs in the demo", len(pairs))
	}
	return w, pairs
}

// readFiltered says whether pairs[i] is the first rank of one of the
// first two runs. The filtered reads of a saved copy (a stage, a share
// floor, a row cap, applied on read) are checked on these; every rank's
// copy is checked whole. A run's other ranks are the same model's other TP
// shards, whose filtered reads were 16 of the two tests' 60 computed
// reports and exercised the same SQL on a copy of the same shape; the
// other runs' first ranks were 16 of the remaining 44, and each of four
// changes to the filters read (the stage, the share floor and its column)
// failed a filtered read of the first run, as of four to six runs of six.
func readFiltered(pairs []runRank, i int) bool {
	if i > 0 && pairs[i-1].run == pairs[i].run {
		return false
	}
	return pairs[i].run == pairs[0].run || !slices.ContainsFunc(pairs[:i], func(p runRank) bool { return p.run != pairs[0].run })
}

// TestFinishSavesFusion: after Finish every rank of every demo run has
// saved fuse-pattern rows equal to what fusion_matches.sql computes, for
// every stage and (the first rank of the first two runs, filtered) for one
// stage with a share floor and for another stage alone;
// a copy goes stale when a gate input changes.
func TestFinishSavesFusion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, pairs := finishedDemo(t)
	if pending, err := aggregates.FusionPending(ctx, w.DB); err != nil || len(pending) != 0 {
		t.Fatalf("after Finish, pending %v %v", pending, err)
	}
	matched := 0
	for i, p := range pairs {
		variants := []queries.FusionMatchesParams{
			{Run: p.run, Rank: sql.NullInt64{Int64: p.rank, Valid: true}},
			// 3%: the demo's decode rows are 1.7-16%, some filtered out
			{Run: p.run, Rank: sql.NullInt64{Int64: p.rank, Valid: true}, Stage: sql.NullString{String: "decode", Valid: true}, MinShare: 3},
			// the stage alone, one that sorts after another (no stage
			// sorts before decode, so a filter by order passes there)
			{Run: p.run, Rank: sql.NullInt64{Int64: p.rank, Valid: true}, Stage: sql.NullString{String: "prefill", Valid: true}},
		}
		if !readFiltered(pairs, i) {
			variants = variants[:1]
		}
		for _, fp := range variants {
			want, err := queries.FusionMatches(ctx, w.DB, fp)
			if err != nil {
				t.Fatal(err)
			}
			got, saved, err := queries.FusionMatchesCached(ctx, w.DB, fp)
			if err != nil {
				t.Fatal(err)
			}
			if !saved || !reflect.DeepEqual(got, want) {
				t.Errorf("run %d rank %d %+v: saved %v\n got %+v\nwant %+v", p.run, p.rank, fp, saved, got, want)
			}
			matched += len(want)
		}
	}
	if matched == 0 {
		t.Fatal("no fuse-pattern row in the demo: the comparison proves nothing")
	}
	// A gate input changes: the copy is not read.
	if _, err := w.DB.ExecContext(ctx, `UPDATE runs SET tp_size = 8 WHERE run_id = ?`, pairs[0].run); err != nil {
		t.Fatal(err)
	}
	fp := queries.FusionMatchesParams{Run: pairs[0].run, Rank: sql.NullInt64{Int64: pairs[0].rank, Valid: true}}
	if _, saved, err := queries.FusionMatchesCached(ctx, w.DB, fp); err != nil || saved {
		t.Errorf("after a TP change: saved %v %v", saved, err)
	}
	// Every rank pooled is never saved.
	fp.Rank = sql.NullInt64{}
	if _, saved, err := queries.FusionMatchesCached(ctx, w.DB, fp); err != nil || saved {
		t.Errorf("every rank: saved %v %v", saved, err)
	}
}

// TestFinishSavesOverlapRows: Finish saves each (run, rank)'s
// overlap-opportunity rows, read back by OverlapByKernelCached exactly as
// OverlapByKernel computes them (the stage, the share floor and the row
// cap applied on read, the first rank of the first two runs: filtered),
// and a stale copy, another verdict floor, every rank
// pooled or a two-trace report are computed.
func TestFinishSavesOverlapRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, pairs := finishedDemo(t)
	if pending, err := aggregates.OverlapRowsPending(ctx, w.DB); err != nil || len(pending) != 0 {
		t.Fatalf("after Finish, pending %v %v", pending, err)
	}
	compared, filtered := 0, 0
	for i, p := range pairs {
		rank := sql.NullInt64{Int64: p.rank, Valid: true}
		variants := []queries.OverlapByKernelParams{
			{Run: p.run, Rank: rank},
			{Run: p.run, Rank: rank, Stage: sql.NullString{String: "decode", Valid: true}, MinShare: 1},
			{Run: p.run, Rank: rank, Stage: sql.NullString{String: "prefill", Valid: true}, MinShare: 0.5, MaxRows: 2},
			{Run: p.run, Rank: rank, MinShare: 2, MaxRows: 3},
		}
		if !readFiltered(pairs, i) {
			variants = variants[:1]
		}
		for _, op := range variants {
			want, err := queries.OverlapByKernel(ctx, w.DB, op)
			if err != nil {
				t.Fatal(err)
			}
			got, saved, err := queries.OverlapByKernelCached(ctx, w.DB, op)
			if err != nil {
				t.Fatal(err)
			}
			if !saved || !reflect.DeepEqual(got, want) {
				t.Errorf("run %d rank %d %+v: saved %v\n got %+v\nwant %+v", p.run, p.rank, op, saved, got, want)
			}
			if op.Stage.Valid || op.MinShare > 0 {
				filtered += len(want)
			} else {
				compared += len(want)
			}
		}
	}
	if compared == 0 || filtered == 0 {
		t.Fatalf("%d rows unfiltered, %d filtered: the comparison proves nothing", compared, filtered)
	}
	first := queries.OverlapByKernelParams{Run: pairs[0].run, Rank: sql.NullInt64{Int64: pairs[0].rank, Valid: true}}
	notSaved := func(what string, op queries.OverlapByKernelParams) {
		t.Helper()
		want, err := queries.OverlapByKernel(ctx, w.DB, op)
		if err != nil {
			t.Fatal(err)
		}
		got, saved, err := queries.OverlapByKernelCached(ctx, w.DB, op)
		if err != nil || saved || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: saved %v, err %v, same rows %v", what, saved, err, reflect.DeepEqual(got, want))
		}
	}
	// Another verdict floor than the saved one: computed.
	other := first
	other.MinDurUS = 50
	notSaved("verdict floor 50 us", other)
	// Every rank pooled, or a two-trace report: never saved.
	pooled := first
	pooled.Rank = sql.NullInt64{}
	notSaved("every rank", pooled)
	twoTrace := first
	twoTrace.Mapping = sql.NullInt64{Int64: pairs[len(pairs)-1].run, Valid: true}
	notSaved("two-trace", twoTrace)
	// The run's kernels change: the copy is stale.
	if _, err := w.DB.ExecContext(ctx, `UPDATE kernels SET dur_ns = dur_ns * 3
		WHERE kernel_id = (SELECT max(kernel_id) FROM kernels WHERE run_id = ? AND rank = ?)`, first.Run, first.Rank.Int64); err != nil {
		t.Fatal(err)
	}
	notSaved("after a kernel change", first)
	// The classifier changes (a migration bumps its version): stale.
	second := queries.OverlapByKernelParams{Run: pairs[len(pairs)-1].run, Rank: sql.NullInt64{Int64: pairs[len(pairs)-1].rank, Valid: true}}
	if _, saved, err := queries.OverlapByKernelCached(ctx, w.DB, second); err != nil || !saved {
		t.Fatalf("run %d before the classifier change: saved %v %v", second.Run, saved, err)
	}
	if _, err := w.DB.ExecContext(ctx, `INSERT INTO classifier_versions VALUES (1000, '9999_test', 'test')`); err != nil {
		t.Fatal(err)
	}
	notSaved("after a classifier change", second)
}

// TestFinishFailedSaveLeavesTheOthers: when one of the saves Finish runs
// side by side fails for every run (its table no longer fits its rows),
// Finish names each run in an *aggregates.FinishError and records the
// failures; the other saves go on and complete, none leaves a copy
// recorded without its rows, and the next Finish (the table repaired)
// tries the failed copies again and completes every save.
func TestFinishFailedSaveLeavesTheOthers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, ingestedDemo(t))
	// Two of the demo's runs, of two ranks and of one: each finish saves
	// every run's triage report, two thirds of this test's time with six.
	if _, err := ingest.RemoveRuns(ctx, w.DB, []string{"sglang-formal", "tokenspeed-deepseek", "vllm-qwen-moe"}); err != nil {
		t.Fatal(err)
	}
	// The fuse-pattern rows no longer fit their table: that save fails.
	if _, err := w.DB.ExecContext(ctx, `ALTER TABLE fusion_match_store ADD COLUMN extra INTEGER`); err != nil {
		t.Fatal(err)
	}
	err := Finish(ctx, w.DB, catalog.Default())
	fe, ok := err.(*aggregates.FinishError)
	if !ok || !strings.Contains(err.Error(), "save fuse patterns") {
		t.Fatalf("Finish with the fuse-pattern save failing: %v", err)
	}
	var runs int
	if err := w.DB.QueryRowContext(ctx, `SELECT count(DISTINCT run_id) FROM kernels`).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	failed := map[int64]bool{}
	for _, f := range fe.Failures {
		if f.Store != "fuse patterns" || f.Attempts != 1 {
			t.Errorf("failure %+v, want the fuse patterns, attempt 1", f)
		}
		failed[f.Run] = true
	}
	if runs != 2 || len(failed) != runs || len(fe.Failures) != runs {
		t.Errorf("%d failures of %d runs, want one for each of the %d runs", len(fe.Failures), len(failed), runs)
	}
	var n int64
	if err := w.DB.QueryRowContext(ctx, `SELECT count(*) FROM fusion_store_runs`).Scan(&n); err != nil || n != 0 {
		t.Errorf("fuse-pattern copies recorded after the failure: %d %v", n, err)
	}
	// The other saves went on: every run has its overlap, steps and
	// overlap-table rows.
	for _, q := range []string{`SELECT count(DISTINCT run_id) FROM kernel_overlap_runs`, `SELECT count(DISTINCT run_id) FROM step_store_runs`,
		`SELECT count(DISTINCT run_id) FROM overlap_row_runs`, `SELECT count(DISTINCT run_id) FROM finish_failures WHERE store = 'fuse patterns'`} {
		var got int
		if err := w.DB.QueryRowContext(ctx, q).Scan(&got); err != nil || got != runs {
			t.Errorf("%s: %d runs (%v), want %d", q, got, err, runs)
		}
	}
	// A recorded copy has its rows: the overlap of every kernel, the step
	// totals of its run.
	for _, q := range []string{
		`SELECT count(*) FROM kernel_overlap_runs r
		 WHERE (SELECT count(*) FROM kernel_overlap_store s WHERE s.run_id = r.run_id)
		    <> (SELECT count(*) FROM kernels k WHERE k.run_id = r.run_id)`,
		`SELECT count(*) FROM step_store_runs r
		 WHERE NOT EXISTS (SELECT 1 FROM step_total_store s WHERE s.run_id = r.run_id)`,
	} {
		if err := w.DB.QueryRowContext(ctx, q).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d copies recorded without their rows (%v): %s", n, err, q)
		}
	}
	if _, err := w.DB.ExecContext(ctx, `ALTER TABLE fusion_match_store DROP COLUMN extra`); err != nil {
		t.Fatal(err)
	}
	if err := Finish(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatalf("Finish again: %v", err)
	}

	for name, pending := range map[string]func(context.Context, *sql.DB) ([]int64, error){
		"fuse patterns": aggregates.FusionPending, "overlap rows": aggregates.OverlapRowsPending,
	} {
		if runs, err := pending(ctx, w.DB); err != nil || len(runs) != 0 {
			t.Errorf("%s still pending after the second Finish: %v %v", name, runs, err)
		}
	}
	for _, table := range []string{"kernel_overlap_runs", "step_store_runs"} {
		var runs, want int64
		if err := w.DB.QueryRowContext(ctx, `SELECT count(DISTINCT run_id) FROM `+table).Scan(&runs); err != nil {
			t.Fatal(err)
		}
		if err := w.DB.QueryRowContext(ctx, `SELECT count(DISTINCT run_id) FROM kernels`).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if runs != want {
			t.Errorf("%s: %d runs recorded after the second Finish, want %d", table, runs, want)
		}
	}
}

// TestUnencodableTriageIsNotSaved: a triage report JSON cannot hold (a
// NaN) fails neither SaveTriage nor the finish: it is recorded with no
// recipe and no sections, so no triage reads it and the next finish does
// not compute it again; a report that encodes keeps its recipe and every
// section.
func TestUnencodableTriageIsNotSaved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, rr := finishedDemo(t)
	run := rr[0].run
	p := queries.TriageParams{Run: run, Rank: sql.NullInt64{Int64: rr[0].rank, Valid: true},
		MinShare: queries.DefaultMinShare, OverlapRows: queries.DefaultOverlapRows}
	good := triageReport(&queries.TriageData{Params: p}, rr[0].rank, "rcp")
	if good.Recipe != "rcp" || len(good.Sections) == 0 || good.Rank != rr[0].rank || good.MinShare != p.MinShare || good.OverlapRows != p.OverlapRows {
		t.Fatalf("an encodable report: %+v", good)
	}
	nan := &queries.TriageData{Params: p, Kernels: []queries.KernelTableRow{{AvgNS: math.NaN()}}}
	bad := triageReport(nan, rr[0].rank, "rcp")
	if bad.Recipe != "" || bad.Sections != nil || bad.Rank != rr[0].rank {
		t.Fatalf("a report with a NaN: recipe %q, %d sections, rank %d", bad.Recipe, len(bad.Sections), bad.Rank)
	}
	for _, table := range []string{"triage_store", "triage_store_runs"} {
		if _, err := w.DB.ExecContext(ctx, `DELETE FROM `+table+` WHERE run_id = ?`, run); err != nil {
			t.Fatal(err)
		}
	}
	if err := aggregates.SaveTriage(ctx, w.DB, []int64{run}, func(context.Context, int64) (*aggregates.TriageReport, error) {
		return bad, nil
	}); err != nil {
		t.Fatalf("saving the record of a report with a NaN: %v", err)
	}
	if pending, err := aggregates.TriagePending(ctx, w.DB); err != nil || len(pending) != 0 {
		t.Errorf("after the record, pending %v (%v)", pending, err)
	}
	recipe, err := TriageRecipe()
	if err != nil {
		t.Fatal(err)
	}
	for _, rcp := range []string{recipe, ""} {
		if _, d, err := queries.TriageSaved(ctx, w.DB, p, rcp); err != nil || d != nil {
			t.Errorf("recipe %q: the record was read as a report (%v, %v)", rcp, d != nil, err)
		}
	}
}
