package aggregates

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestFinishFailsForThatRunAlone (issue 36 item A, issue 38): a run whose
// saved copies cannot be made (one kernel's end overflows int64, so
// DuckDB's sums fail: "Out of Range Error") fails alone. The run it was
// batched with is saved; the failure is recorded; later ingests of other
// runs finish their own runs and retry the failed one FinishAttempts
// times in all, then leave it; once the run changes (a new trace, the
// value repaired) it is saved.
func TestFinishFailsForThatRunAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, "")
	const (
		sg = "../testdata/demo/sglang-llama/2025-07-04_18-26-43/1751653603.1234567-"
		sf = "../testdata/demo/sglang-formal/2025-07-04_23-27-18/1751671638.1234567-"
	)
	ingestAs := func(label string, paths ...string) {
		t.Helper()
		var runs int
		if err := w.DB.QueryRow(`SELECT count(*) FROM runs WHERE label = ?`, label).Scan(&runs); err != nil {
			t.Fatal(err)
		}
		res, err := ingest.Ingest(ctx, w, paths, ingest.Options{Run: label, Append: runs > 0, Jobs: 1})
		if err != nil || res.Failed() > 0 {
			t.Fatalf("ingest %s: %v %+v", label, err, res)
		}
	}
	ingestAs("a", sg+"TP-0-DECODE.trace.json.gz", sg+"TP-0-EXTEND.trace.json.gz")
	ingestAs("b", "../testdata/demo/trtllm-llama")
	a := runID(t, w, "a")
	var kernel, dur int64
	if err := w.DB.QueryRow(`SELECT kernel_id, dur_ns FROM kernels WHERE run_id = ? ORDER BY kernel_id LIMIT 1`, a).Scan(&kernel, &dur); err != nil {
		t.Fatal(err)
	}
	if _, err := w.DB.Exec(`UPDATE kernels SET dur_ns = 9000000000000000000 WHERE kernel_id = ?`, kernel); err != nil {
		t.Fatal(err)
	}

	// The finish of a and b together: a fails, b is saved.
	failedAlone := func(step string, attempts int) {
		t.Helper()
		err := FinishPerRun(ctx, w.DB, catalog.Default())
		fe, ok := err.(*FinishError)
		if !ok {
			t.Fatalf("%s: Finish returned %v, want a *FinishError alone", step, err)
		}
		var got []string
		for _, f := range fe.Failures {
			if f.Label != "a" || f.Run != a || f.Attempts != attempts {
				t.Errorf("%s: failure %+v, want run a (%d), attempt %d", step, f, a, attempts)
			}
			got = append(got, f.Store)
		}
		// The overlap and the step aggregates sum kernel ends; Finish does
		// not save fuse-pattern or overlap-table rows (Finish does).
		if want := []string{"overlap", "steps"}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: failed copies %v, want %v", step, got, want)
		}
		got2 := schematest.Dump(t, w.DB, `SELECT run_id, store, attempts FROM finish_failures ORDER BY ALL`)
		want := schematest.Dump(t, w.DB, fmt.Sprintf(`SELECT %d::INTEGER, s, %d::INTEGER FROM (VALUES ('overlap'), ('steps')) v(s) ORDER BY ALL`, a, attempts))
		if got2 != want {
			t.Errorf("%s: finish_failures\n%s\nwant\n%s", step, got2, want)
		}
	}
	failedAlone("a and b", 1)
	savedExactly := func(step string, labels ...string) {
		t.Helper()
		for _, table := range []string{"kernel_overlap_runs", "step_store_runs"} {
			got := schematest.Dump(t, w.DB, `SELECT label FROM runs WHERE run_id IN (SELECT run_id FROM `+table+`) ORDER BY label`)
			want := ""
			for _, l := range labels {
				want += l + "\n"
			}
			if got != want {
				t.Errorf("%s: runs with a copy in %s:\n%s\nwant\n%s", step, table, got, want)
			}
		}
	}
	savedExactly("a and b", "b")

	// Later ingests of other runs succeed: each finishes its own run and
	// tries a's copies again, until FinishAttempts.
	ingestAs("c", sf+"TP-0-DECODE.trace.json.gz")
	failedAlone("c", 2)
	ingestAs("d", sf+"TP-1-DECODE.trace.json.gz")
	failedAlone("d", 3)
	ingestAs("e", sf+"TP-0-EXTEND.trace.json.gz")
	if err := FinishPerRun(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatalf("e: Finish after a's last attempt: %v", err)
	}
	savedExactly("e", "b", "c", "d", "e")
	if p, err := finishPending(ctx, w.DB); err != nil || len(p.overlap) != 0 || len(p.steps) != 0 {
		t.Errorf("due after a's last attempt: overlap %v, steps %v, %v", p.overlap, p.steps, err)
	}

	// a changes (the value repaired, one more trace): saved.
	if _, err := w.DB.Exec(`UPDATE kernels SET dur_ns = ? WHERE kernel_id = ?`, dur, kernel); err != nil {
		t.Fatal(err)
	}
	ingestAs("a", sg+"TP-1-DECODE.trace.json.gz")
	if err := FinishPerRun(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatalf("Finish after a changed: %v", err)
	}
	savedExactly("a changed", "a", "b", "c", "d", "e")
}

// TestFinishInterruptedRecordsNothing: a save stopped by its context is no
// run's failure: nothing is recorded and the run stays pending.
func TestFinishInterruptedRecordsNothing(t *testing.T) {
	t.Parallel()
	w := threeDemoRuns(t)
	ctx, cancel := context.WithCancel(context.Background())
	p, err := finishPending(ctx, w.DB)
	runs := p.overlap
	if err != nil || len(runs) != 3 {
		t.Fatalf("pending: %v %v", runs, err)
	}
	bs := []batch{{runs: runs}}
	err = saveIsolated(ctx, w.DB, "overlap", bs, &p, func(ctx context.Context, db *sql.DB, b batch) error {
		cancel()
		return ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("saveIsolated interrupted: %v", err)
	}
	if got := schematest.Dump(t, w.DB, `SELECT * FROM finish_failures`); got != "" {
		t.Errorf("finish_failures after an interruption:\n%s", got)
	}
}

// TestBatchFailureSaidWhenEachRunSaves: a batch of several runs that
// fails while each of its runs then saves alone is said, once, naming the
// runs and the batch's error (a batching bug would otherwise only cost
// time, silently); a run that fails alone too is a FinishFailure and no
// such notice, and a batch that saves says nothing.
func TestBatchFailureSaidWhenEachRunSaves(t *testing.T) {
	t.Parallel()
	w := threeDemoRuns(t)
	base := context.Background()
	p, err := finishPending(base, w.DB)
	runs := p.overlap
	if err != nil || len(runs) != 3 {
		t.Fatalf("pending: %v %v", runs, err)
	}
	labels := map[int64]string{}
	for _, label := range []string{"sglang-llama", "tokenspeed-deepseek", "trtllm-llama"} {
		labels[runID(t, w, label)] = label
	}
	for _, c := range []struct {
		name      string
		fails     func(b batch) bool
		wantNotes []string
		wantFail  []string
	}{
		{"batch fails, runs save", func(b batch) bool { return len(b.runs) > 1 },
			[]string{"saving the overlap of runs " + labels[runs[0]] + ", " + labels[runs[1]] + ", " + labels[runs[2]] +
				" together failed, so each was saved alone (the same rows, more time): boom"}, nil},
		{"one run fails alone too", func(b batch) bool { return len(b.runs) > 1 || b.runs[0] == runs[1] },
			nil, []string{labels[runs[1]]}},
		{"nothing fails", func(batch) bool { return false }, nil, nil},
	} {
		var notes []string
		ctx := WithNotice(base, func(msg string) { notes = append(notes, msg) })
		var saved []int64
		err := saveIsolated(ctx, w.DB, "overlap", []batch{{runs: runs}}, &p, func(ctx context.Context, db *sql.DB, b batch) error {
			if c.fails(b) {
				return errors.New("boom\nsecond line")
			}
			saved = append(saved, b.runs...)
			return nil
		})
		var failed []string
		var fe *FinishError
		if errors.As(err, &fe) {
			for _, f := range fe.Failures {
				failed = append(failed, f.Label)
			}
		} else if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(notes, c.wantNotes) || !reflect.DeepEqual(failed, c.wantFail) {
			t.Errorf("%s: notices %q, failures %q; want %q, %q", c.name, notes, failed, c.wantNotes, c.wantFail)
		}
		if want := len(runs) - len(c.wantFail); len(saved) != want {
			t.Errorf("%s: saved runs %v, want %d", c.name, saved, want)
		}
	}
}

// runID is the id of the run labelled label.
func runID(t *testing.T, w *schema.Warehouse, label string) int64 {
	t.Helper()
	var id int64
	if err := w.DB.QueryRow(`SELECT run_id FROM runs WHERE label = ?`, label).Scan(&id); err != nil {
		t.Fatalf("run %s: %v", label, err)
	}
	return id
}
