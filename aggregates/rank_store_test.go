package aggregates

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

func TestBatches(t *testing.T) {
	t.Parallel()
	ranks := []runRank{{1, 0, 5}, {1, 1, 5}, {2, 0, 30}, {3, 0, 4}, {4, 0, 3}, {4, 2, 3}}
	// run 5 has no GPU events: it only forgets its copy
	got := batches([]int64{1, 2, 3, 4, 5}, []int64{1, 2, 3, 4, 5}, ranks, 12)
	want := []batch{
		{runs: []int64{1}, ranks: ranks[:2]},
		{runs: []int64{2}, ranks: ranks[2:3], perRank: true, accepted: true},
		{runs: []int64{3, 4, 5}, ranks: ranks[3:]},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("batches:\n got %+v\nwant %+v", got, want)
	}
	if got := batches([]int64{1, 2}, []int64{1, 2}, ranks[:3], 1<<21); len(got) != 1 || got[0].perRank || len(got[0].ranks) != 3 {
		t.Errorf("one batch: %+v", got)
	}
	// run 2 may not go with others: it is saved rank by rank
	got = batches([]int64{1, 2, 3}, []int64{1, 3}, ranks[:4], 1<<21)
	want = []batch{
		{runs: []int64{1}, ranks: ranks[:2]},
		{runs: []int64{2}, ranks: ranks[2:3], perRank: true},
		{runs: []int64{3}, ranks: ranks[3:4]},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("batches, run 2 alone:\n got %+v\nwant %+v", got, want)
	}
	// runs 3 and 4 (4 + 6 events) do not fit with run 1 (10) in 12: a
	// batch is closed when the next run would take it over the limit
	got = batches([]int64{1, 3, 4}, []int64{1, 3, 4}, ranks, 12)
	want = []batch{
		{runs: []int64{1}, ranks: ranks[:2]},
		{runs: []int64{3, 4}, ranks: ranks[3:]},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("batches, run 1 full:\n got %+v\nwant %+v", got, want)
	}
	// apart: run 2 (a rank above 20 events) goes to a batch of its own,
	// saved rank by rank; runs 1 and 3 stay together
	got = apart([]batch{{runs: []int64{1, 2, 3}, ranks: ranks[:4]}}, func(rs []runRank) bool {
		return slices.ContainsFunc(rs, func(r runRank) bool { return r.kernels > 20 })
	})
	want = []batch{
		{runs: []int64{2}, ranks: ranks[2:3], perRank: true, accepted: true},
		{runs: []int64{1, 3}, ranks: []runRank{ranks[0], ranks[1], ranks[3]}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("apart:\n got %+v\nwant %+v", got, want)
	}
}

// threeDemoRuns is a copy, for t alone, of threeDemoTemplate.
func threeDemoRuns(t *testing.T) *schema.Warehouse {
	t.Helper()
	return schematest.Open(t, threeDemoTemplate(t))
}

// finishedThreeDemoRuns is a copy, for t alone, of threeDemoTemplate
// finished (FinishPerRun with the embedded catalog) once per test binary:
// the start of the tests that finished their own copy first.
func finishedThreeDemoRuns(t *testing.T) *schema.Warehouse {
	t.Helper()
	return schematest.Open(t, schematest.Derived(t, "three-demo-runs-finished", threeDemoTemplate(t),
		func(ctx context.Context, w *schema.Warehouse) error {
			return FinishPerRun(ctx, w.DB, catalog.Default())
		}))
}

// threeDemoTemplate is a warehouse holding three demo runs, ingested once
// per test binary and not finished: two ranks and two stages; another
// framework, model and TP size (other gates); another framework again.
func threeDemoTemplate(t *testing.T) string {
	t.Helper()
	return schematest.Template(t, "three-demo-runs", func(ctx context.Context, w *schema.Warehouse) error {
		demo := []string{"../testdata/demo/sglang-llama", "../testdata/demo/tokenspeed-deepseek", "../testdata/demo/trtllm-llama"}
		_, err := ingest.Ingest(ctx, w, demo, ingest.Options{Jobs: 2})
		return err
	})
}

// TestSavedRowsSameInBatches: fuse-pattern and overlap rows of demo runs
// saved rank by rank (every run over the limit), in several batches and in
// one are the same rows (the overlap rows also computed without their
// twin reading the saved overlap), and each way records every rank with the
// fingerprint its readers compute; so are the fuse-pattern rows saved with
// every rank's chain occurrences found in Go (sweepChains, as for a large
// rank), the catalog's own entries matched on the demo runs' kernels.
func TestSavedRowsSameInBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := finishedThreeDemoRuns(t)
	runs, err := FusionPending(ctx, w.DB)
	if err != nil || len(runs) != 3 {
		t.Fatalf("pending runs %v %v", runs, err)
	}
	// the overlap rows also as computed by _overlap_rows_for, without the
	// twin reading the saved overlap (overlap_rows_store_saved.sql)
	computed := overlapRowsStore(5000)
	computed.saved = ""
	stores := []rankStore{fusionStore(), overlapRowsStore(5000), computed}
	first := map[string]string{}
	// each store's table, records and the fingerprint a reader compares
	// them with
	records := map[string][3]string{
		"fuse patterns": {"fusion_match_store", "fusion_store_runs", "_fusion_fingerprint"},
		"overlap rows":  {"overlap_row_store", "overlap_row_runs", "_overlap_rows_fingerprint"},
	}
	// every rank with GPU events gets one record, whichever statement wrote it
	want := schematest.Dump(t, w.DB, "SELECT DISTINCT run_id, rank FROM kernels ORDER BY ALL")
	if strings.Count(want, "\n") < 4 {
		t.Fatalf("want ranks of several runs, one with two ranks: %s", want)
	}
	// (the overlap rows of a run go in a batch only when its per-kernel
	// overlap is saved and current, as after Finish)
	if cur, err := someRuns(ctx, w.DB, "overlap_store_current", runs); err != nil || !reflect.DeepEqual(cur, runs) {
		t.Fatalf("runs with current overlap: %v %v, want %v", cur, err, runs)
	}
	for _, s := range stores {
		table, rec, fp := records[s.what][0], records[s.what][1], records[s.what][2]
		// limit 0: one batch, every rank swept (only the fuse patterns:
		// the overlap rows have no sweep, and 0 saved them as 1 << 40
		// does). Batches of 700 events (some runs rank by rank, the
		// others together) failed no change to the batching that these
		// two did not (bench/README.md, fifty-seventh figures).
		limits := []int64{1, 1 << 40, 0}
		if s.chains == nil {
			limits = limits[:2]
		}
		for _, limit := range limits {
			s.limit = limit
			if limit == 0 {
				s.limit, s.chainsAbove = 1<<40, 0
			}
			saveEachBatch(ctx, t, w.DB, s, runs)
			if got := schematest.Dump(t, w.DB, "SELECT run_id, rank FROM "+rec+" ORDER BY ALL"); got != want {
				t.Errorf("%s with batches of %d kernels: records\n%s\nwant\n%s", rec, limit, got, want)
			}
			if stale := schematest.Dump(t, w.DB, "SELECT r.run_id, r.rank FROM "+rec+" r WHERE r.fingerprint <> "+fp+"(r.run_id)"); stale != "" {
				t.Errorf("%s with batches of %d kernels: records not current:\n%s", rec, limit, stale)
			}
			got := schematest.Dump(t, w.DB, "SELECT * FROM "+table+" ORDER BY ALL")
			if first[s.what] == "" {
				first[s.what] = got
				if strings.Count(got, "\n") < 20 {
					t.Fatalf("%s: only %d rows", table, strings.Count(got, "\n"))
				}
				continue
			}
			if got != first[s.what] {
				t.Errorf("%s with batches of %d kernels (saved twin %q) differs from rank by rank", table, limit, s.saved)
			}
		}
	}
}

// saveEachBatch saves runs as s.save does (plan, apart), each batch by
// saveBatch itself: save's saveIsolated saves a failing batch's runs again
// one at a time, the same rows by another path, which hid a batch of
// several runs that could not be saved at all (bench/README.md, sixty-third
// figures).
func saveEachBatch(ctx context.Context, t *testing.T, db *sql.DB, s rankStore, runs []int64) {
	t.Helper()
	limit := s.limit
	if limit == 0 {
		limit = batchKernels
	}
	bs, err := plan(ctx, db, s.batchable, runs, nil, limit)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range apart(bs, s.alone) {
		if err := s.saveBatch(ctx, db, b, nil); err != nil {
			t.Fatalf("%s, batch %+v: %v", s.what, b, err)
		}
	}
}

// TestSavedRowsOfStaleAndEmptyRuns: the overlap rows of three demo runs,
// the second's saved per-kernel overlap gone (so its rows are computed,
// not read from that copy by the saved twin), saved again, are those saved
// while that copy was current; and a run whose
// GPU events are gone, saved again, keeps neither rows nor records.
func TestSavedRowsOfStaleAndEmptyRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := finishedThreeDemoRuns(t)
	runs, err := FusionPending(ctx, w.DB)
	if err != nil || len(runs) != 3 {
		t.Fatalf("pending runs %v %v", runs, err)
	}
	exec := func(q string) {
		t.Helper()
		if _, err := w.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	dump := func() string {
		return schematest.Dump(t, w.DB, "SELECT * FROM overlap_row_store ORDER BY ALL") +
			schematest.Dump(t, w.DB, "SELECT run_id, rank, min_dur_ns FROM overlap_row_runs ORDER BY ALL")
	}
	s := overlapRowsStore(5000)
	s.limit = 1 << 40
	saveEachBatch(ctx, t, w.DB, s, runs)
	want := dump()
	if n := schematest.Dump(t, w.DB, fmt.Sprintf("SELECT count(*) > 10 FROM overlap_row_store WHERE run_id = %d", runs[1])); n != "true\n" {
		t.Fatalf("too few overlap rows of run %d: %s", runs[1], want)
	}
	exec(fmt.Sprintf("DELETE FROM kernel_overlap_store WHERE run_id = %d", runs[1]))
	exec(fmt.Sprintf("DELETE FROM kernel_overlap_runs WHERE run_id = %d", runs[1]))
	// three batches: run 1, run 2 alone rank by rank (its rows computed),
	// run 3 (a run alone closes the batch before it; runs 1 and 3 read
	// their saved overlap); rank by rank throughout (limit 1) failed no
	// change to the batching that this did not
	saveEachBatch(ctx, t, w.DB, s, runs)
	if got := dump(); got != want {
		t.Errorf("run %d's overlap not saved: rows and records\n%s\nwant\n%s", runs[1], got, want)
	}
	exec(fmt.Sprintf("DELETE FROM kernels WHERE run_id = %d", runs[2]))
	saveEachBatch(ctx, t, w.DB, s, runs[2:])
	left := fmt.Sprintf("SELECT (SELECT count(*) FROM overlap_row_store WHERE run_id = %d) + (SELECT count(*) FROM overlap_row_runs WHERE run_id = %d)", runs[2], runs[2])
	if got := schematest.Dump(t, w.DB, left); got != "0\n" {
		t.Errorf("run %d without GPU events keeps rows and records: %s", runs[2], got)
	}
}

// TestRunStoresSameInBatches: the per-kernel overlap, busy rows and step
// aggregates Finish saves for three demo runs in one batch are those saved
// run by run (start ranks are numbered across a batch: compared from each
// group's first).
func TestRunStoresSameInBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := threeDemoRuns(t)
	dump := func() string {
		return schematest.Dump(t, w.DB, `SELECT * EXCLUDE (start_rank, starts_before_end, first_rank),
			start_rank - first_rank, starts_before_end - first_rank
			FROM (SELECT *, min(start_rank) OVER (PARTITION BY trace_id, stage, device) AS first_rank FROM kernel_overlap_store)
			ORDER BY kernel_id`) +
			schematest.Dump(t, w.DB, `SELECT * FROM device_busy_store ORDER BY ALL`) +
			schematest.Dump(t, w.DB, `SELECT * FROM step_kernel_store ORDER BY ALL`) +
			schematest.Dump(t, w.DB, `SELECT * FROM step_total_store ORDER BY ALL`) +
			schematest.Dump(t, w.DB, `SELECT run_id, fingerprint FROM kernel_overlap_runs ORDER BY ALL`) +
			schematest.Dump(t, w.DB, `SELECT run_id, fingerprint FROM step_store_runs ORDER BY ALL`)
	}
	p, err := finishPending(ctx, w.DB)
	runs := p.overlap
	if err != nil || len(runs) != 3 {
		t.Fatalf("pending %v %v", runs, err)
	}
	if err := FinishPerRun(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatal(err)
	}
	batched := dump()
	if n := strings.Count(batched, "\n"); n < 1000 {
		t.Fatalf("only %d rows saved", n)
	}
	for _, run := range runs {
		if err := SaveOverlap(ctx, w.DB, run); err != nil {
			t.Fatal(err)
		}
		if err := SaveSteps(ctx, w.DB, run); err != nil {
			t.Fatal(err)
		}
	}
	if alone := dump(); alone != batched {
		t.Errorf("saved in one batch and run by run differ")
	}
}

// TestSomeRunsBatched: the runs whose saved overlap is current, asked for
// all at once (overlap_store_current_runs.sql), are those the one-run
// statement accepts, with runs current, stale, without a record and
// unknown.
func TestSomeRunsBatched(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := finishedThreeDemoRuns(t)
	var runs []int64
	rows, err := w.DB.QueryContext(ctx, "SELECT run_id FROM runs ORDER BY run_id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var run int64
		if err := rows.Scan(&run); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	if err := rows.Close(); err != nil || len(runs) != 3 {
		t.Fatalf("runs %v %v", runs, err)
	}
	oneByOne := func(ask []int64) []int64 {
		var out []int64
		for _, run := range ask {
			got, err := someRuns(ctx, w.DB, "overlap_store_current", []int64{run})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, got...)
		}
		return out
	}
	ask := append([]int64{999}, runs...) // 999: no such run
	check := func(want []int64) {
		t.Helper()
		got, err := someRuns(ctx, w.DB, "overlap_store_current", ask)
		if err != nil {
			t.Fatal(err)
		}
		if alone := oneByOne(ask); !reflect.DeepEqual(got, alone) || !reflect.DeepEqual(got, want) {
			t.Errorf("current runs: at once %v, one by one %v, want %v", got, alone, want)
		}
	}
	check(runs)
	// the second run's copy goes stale, the third loses its record
	if _, err := w.DB.ExecContext(ctx, "UPDATE kernel_overlap_runs SET fingerprint = fingerprint + 1 WHERE run_id = ?", runs[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := w.DB.ExecContext(ctx, "DELETE FROM kernel_overlap_runs WHERE run_id = ?", runs[2]); err != nil {
		t.Fatal(err)
	}
	check(runs[:1])
}
