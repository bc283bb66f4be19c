package aggregates

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// dueRef is the rule of a copy being due, asked store by store the other
// way round (grouping the traces, the rule in HAVING) as a reference for
// finish_pending.sql: due unless the copy (its oldest record in copies) is
// as new as the run's traces, or its save failed FinishAttempts times for
// these traces; never for a run whose traces were all given the mapping
// role by the flag.
func dueRef(ctx context.Context, db *sql.DB, copies, store string) ([]int64, error) {
	rows, err := db.QueryContext(ctx, `SELECT t.run_id
FROM traces t
LEFT JOIN (SELECT run_id, min(stored_at) AS stored_at FROM `+copies+` GROUP BY run_id) s ON s.run_id = t.run_id
LEFT JOIN finish_failures f ON f.run_id = t.run_id AND f.store = ?
GROUP BY t.run_id
HAVING bool_or(t.role <> 'mapping' OR t.role_source <> 'flag')
   AND (any_value(s.stored_at) IS NULL OR max(t.ingested_at) > any_value(s.stored_at))
   AND (coalesce(any_value(f.attempts), 0) < ? OR max(t.ingested_at) > any_value(f.traces_at))
ORDER BY t.run_id`, store, FinishAttempts)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []int64
	for rows.Next() {
		var r int64
		if err := rows.Scan(&r); err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, rows.Err()
}

// TestFinishPendingAsEachStoreSays: the one query a finish asks what is due
// with (finish_pending.sql) gives, store by store, the runs the rule gives
// (dueRef), and the ranks run_ranks.sql gives for them, in every state a
// warehouse passes through: nothing saved, some copies saved for some
// runs, a run whose traces changed since its copies, failures recorded
// under and at FinishAttempts, a two-trace mapping run, and everything
// saved.
func TestFinishPendingAsEachStoreSays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, "")
	if err := ingest.InstallCatalog(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatal(err)
	}
	const sg = "../testdata/demo/sglang-llama/2025-07-04_18-26-43/1751653603.1234567-"
	for label, path := range map[string]string{
		"a": sg + "TP-0-DECODE.trace.json.gz", "b": sg + "TP-1-DECODE.trace.json.gz",
		"c": sg + "TP-0-EXTEND.trace.json.gz", "d": "../testdata/demo/tokenspeed-deepseek",
	} {
		res, err := ingest.Ingest(ctx, w, []string{path}, ingest.Options{Run: label, Jobs: 1})
		if err != nil || res.Failed() > 0 {
			t.Fatalf("ingest %s: %v %+v", label, err, res)
		}
	}
	a, b, c, d := runID(t, w, "a"), runID(t, w, "b"), runID(t, w, "c"), runID(t, w, "d")

	same := func(step string) {
		t.Helper()
		got, err := finishPending(ctx, w.DB)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		var all []int64
		for _, s := range []struct {
			copies, store string
			got           []int64
		}{{"kernel_overlap_runs", "overlap", got.overlap}, {"fusion_store_runs", "fuse patterns", got.fusion},
			{"step_store_runs", "steps", got.steps}, {"overlap_row_runs", "overlap rows", got.rows}} {
			want, err := dueRef(ctx, w.DB, s.copies, s.store)
			if err != nil {
				t.Fatalf("%s: %s: %v", step, s.store, err)
			}
			if len(want) == 0 && len(s.got) == 0 {
				continue
			}
			if !reflect.DeepEqual(s.got, want) {
				t.Errorf("%s: %s: finish_pending says %v, the rule %v", step, s.store, s.got, want)
			}
			for _, r := range want {
				if !contains(all, r) {
					all = append(all, r)
				}
			}
		}
		want := []runRank{}
		if len(all) > 0 {
			if want, err = runRanks(ctx, w.DB, all); err != nil {
				t.Fatalf("%s: run_ranks: %v", step, err)
			}
		}
		if !reflect.DeepEqual(got.ranks, want) {
			t.Errorf("%s: ranks %+v, run_ranks %+v", step, got.ranks, want)
		}
	}
	same("nothing saved")

	if err := SaveOverlap(ctx, w.DB, a); err != nil {
		t.Fatal(err)
	}
	if err := SaveFusion(ctx, w.DB, []int64{a, c}); err != nil {
		t.Fatal(err)
	}
	if err := stepStore().save(ctx, w.DB, []int64{b}); err != nil {
		t.Fatal(err)
	}
	if err := SaveOverlapRows(ctx, w.DB, []int64{d}, 5000); err != nil {
		t.Fatal(err)
	}
	same("some copies saved")

	// c's traces newer than its fuse-pattern rows
	if _, err := w.DB.Exec(`UPDATE traces SET ingested_at = ingested_at + INTERVAL 1 HOUR WHERE run_id = ?`, c); err != nil {
		t.Fatal(err)
	}
	same("a run changed since its copy")

	// failures: b's overlap failed FinishAttempts times for its traces (not
	// due), d's fuse patterns once (due), a's overlap rows FinishAttempts
	// times for older traces (due)
	for _, f := range []struct {
		run      int64
		store    string
		attempts int
	}{{b, "overlap", FinishAttempts}, {d, "fuse patterns", 1}, {a, "overlap rows", FinishAttempts}} {
		for range f.attempts {
			if _, err := recordFailure(ctx, w.DB, f.store, f.run, errors.New("made up")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := w.DB.Exec(`UPDATE finish_failures SET traces_at = traces_at - INTERVAL 1 HOUR WHERE run_id = ?`, a); err != nil {
		t.Fatal(err)
	}
	same("failures recorded")

	// d is the mapping run of a two-trace pair, told by the flag
	if _, err := w.DB.Exec(`UPDATE traces SET role = 'mapping', role_source = 'flag' WHERE run_id = ?`, d); err != nil {
		t.Fatal(err)
	}
	same("a mapping run")

	if err := Finish(ctx, w.DB, catalog.Default(), 5000); err != nil {
		var fe *FinishError
		if !errors.As(err, &fe) {
			t.Fatal(err)
		}
	}
	same("finished")
}

func contains(xs []int64, x int64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
