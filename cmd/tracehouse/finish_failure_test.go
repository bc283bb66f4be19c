package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
)

// TestFinishFailureStaysWithItsRun (issue 36 item A, issue 38): a stored
// run whose saved copies cannot be made (a kernel whose end overflows
// int64, stored by an older build, its finish never run) no longer fails
// every later ingest. Each later ingest of another run exits 0, stores and
// finishes its run, and tries the failed run again with a note naming it,
// until the last attempt; the ingest after that says nothing of it.
func TestFinishFailureStaysWithItsRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := trtllmCopy(t) // trtllm-llama ingested, its copies saved
	w, err := schema.Open(ctx, db, schema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE kernels SET dur_ns = 9000000000000000000 WHERE kernel_id = (SELECT min(kernel_id) FROM kernels)`,
		// as if the process had died between the trace's commit and its finish
		`DELETE FROM kernel_overlap_runs`, `DELETE FROM step_store_runs`, `DELETE FROM fusion_store_runs`, `DELETE FROM overlap_row_runs`,
	} {
		if _, err := w.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	const sf = "../../testdata/demo/sglang-formal/2025-07-04_23-27-18/1751671638.1234567-"
	for i, file := range []string{"TP-0-DECODE", "TP-1-DECODE", "TP-0-EXTEND", "TP-1-EXTEND"} {
		run := fmt.Sprintf("r%d", i+1)
		code, _, stderr := runCmd(t, "--db", db, "ingest", "--run", run, sf+file+".trace.json.gz")
		if code != 0 || !strings.Contains(stderr, "ingested ") || strings.Contains(stderr, "error") || strings.Contains(stderr, "tracehouse:") {
			t.Fatalf("ingest %s (attempt %d at trtllm-llama's copies): exit %d\n%s", run, i+1, code, stderr)
		}
		notes := 0
		for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
			if !strings.HasPrefix(line, "note: ") {
				continue
			}
			notes++
			want := fmt.Sprintf("note: run trtllm-llama is stored, but saving its overlap failed (attempt %d of %d: ", i+1, aggregates.FinishAttempts)
			if !strings.HasPrefix(line, "note: run trtllm-llama is stored, but saving its ") ||
				!strings.Contains(line, fmt.Sprintf("(attempt %d of %d: ", i+1, aggregates.FinishAttempts)) || !strings.Contains(line, "Out of Range Error") {
				t.Errorf("ingest %s: note %q, want one like %q...", run, line, want)
			}
		}
		if i < aggregates.FinishAttempts && notes == 0 || i >= aggregates.FinishAttempts && notes != 0 {
			t.Errorf("ingest %s: %d notes after %d attempts\n%s", run, notes, i, stderr)
		}
	}
	code, out, stderr := runCmd(t, "--db", db, "--format", "csv", "sql",
		`SELECT count(*) FILTER (WHERE r.label = 'trtllm-llama') AS failed, count(*) AS saved FROM kernel_overlap_runs o JOIN runs r USING (run_id)`)
	if code != 0 || out != "failed,saved\n0,4\n" {
		t.Errorf("saved overlaps: exit %d %q %s", code, out, stderr)
	}
}

// TestFinishFailedLines: a failed copy of a run the command stored is an
// error and exit 1; one of an earlier run (tried again) is a note and
// leaves the exit status to the command's own runs. One line each.
func TestFinishFailedLines(t *testing.T) {
	t.Parallel()
	res := &ingest.Result{Files: []ingest.FileResult{
		{Path: "x.json", Status: ingest.StatusIngested, Run: "mine", Events: 3, GPUEvents: 1, JSONBytes: 1000},
		{Path: "y.json", Status: ingest.StatusAlready, Run: "older"},
	}}
	boom := errors.New("save overlap of run(s) [2]: Out of Memory Error:\nfailed to allocate")
	for _, c := range []struct {
		failures []aggregates.FinishFailure
		code     int
		lines    []string
	}{
		{[]aggregates.FinishFailure{{Run: 2, Label: "older", Store: "overlap", Attempts: 2, Err: boom}}, 0,
			[]string{"note: run older is stored, but saving its overlap failed (attempt 2 of 3: a later ingest tries again; reports compute it meanwhile): save overlap of run(s) [2]: Out of Memory Error: failed to allocate"}},
		{[]aggregates.FinishFailure{{Run: 1, Label: "mine", Store: "steps", Attempts: 1, Err: boom},
			{Run: 2, Label: "older", Store: "fuse patterns", Attempts: 3, Err: boom}}, exitError,
			[]string{"error: run mine is stored, but saving its steps failed (attempt 1 of 3: a later ingest tries again; reports compute it meanwhile): save overlap of run(s) [2]: Out of Memory Error: failed to allocate",
				"note: run older is stored, but saving its fuse patterns failed (attempt 3 of 3: not tried again until the run changes; reports compute it): save overlap of run(s) [2]: Out of Memory Error: failed to allocate"}},
	} {
		io, _, errOut := testIO("")
		err := finishFailed(io, res, &aggregates.FinishError{Failures: c.failures})
		if got := exitCode(err); got != c.code {
			t.Errorf("%v: exit %d, want %d", c.failures, got, c.code)
		}
		want := strings.Join(c.lines, "\n") + "\ningested 1 file(s) (3 events, 1 GPU events, 0.0 MB of JSON), 1 already ingested\n"
		if errOut.String() != want {
			t.Errorf("stderr\n%s\nwant\n%s", errOut.String(), want)
		}
	}
}
