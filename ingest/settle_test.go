package ingest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestSettleUnknownCommits is the interleaving TestDiskFullAtCheckpointParallel
// met once in about 30 runs, made by hand: one loader's COMMIT wrote its
// write-ahead log record (the trace is stored) but failed, interrupted as
// the ingest stopped on another loader's failed checkpoint, which
// invalidated DuckDB; another loader's COMMIT met the invalidated
// warehouse and stored nothing. Neither could ask the warehouse then. The
// ingest asks the warehouse file, opened again, and counts the first as
// stored, the second as failed: before, both counted as failed, and
// "8 of 20 file(s) stored" was printed with 9 in the warehouse.
func TestSettleUnknownCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, "")
	// two files (the settling needs a file before the last), the demo's
	// smallest of sglang-llama's four
	const sg = "../testdata/demo/sglang-llama/2025-07-04_18-26-43/1751653603.1234567-"
	res, err := Ingest(ctx, w, []string{sg + "TP-0-DECODE.trace.json.gz", sg + "TP-1-DECODE.trace.json.gz"}, Options{Jobs: 1})
	if err != nil || res.Failed() > 0 || len(res.Files) < 2 {
		t.Fatalf("ingest: %v, %+v", err, res)
	}
	// The last file's trace, committed to the log only (no checkpoint
	// since), is the one whose COMMIT "failed".
	files := append([]FileResult(nil), res.Files...)
	last := &files[len(files)-1]
	interrupted := &dbError{&commitUnknown{id: last.TraceID, err: errors.New(last.Path + ": commit: INTERRUPT Error: Interrupted!")}}
	last.Status, last.Err = StatusFailed, interrupted

	// The other loader: its transaction begun, then another connection's
	// checkpoint fails fatally (DuckDB's debug abort stands for the full
	// disk), then its COMMIT.
	conn, err := w.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, err := nextTraceID(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := beginTrace(ctx, conn, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.DB.ExecContext(ctx, "SET debug_checkpoint_abort = 'before_header'"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.DB.ExecContext(ctx, "CREATE TABLE _settle_test (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.DB.ExecContext(ctx, "CHECKPOINT"); err == nil || !strings.Contains(err.Error(), "checkpoint_abort") {
		t.Fatalf("checkpoint: %v, want DuckDB's fatal abort", err)
	}
	cerr := tx.commit(ctx, "other.trace.json", id)
	conn.Close()
	var u *commitUnknown
	if !errors.As(cerr, &u) || u.id != id {
		t.Fatalf("commit in an invalidated warehouse: %v, want its outcome unknown", cerr)
	}
	files = append(files, FileResult{Path: "other.trace.json", Status: StatusFailed, TraceID: id, Err: cerr})

	if err := settleUnknown(ctx, w, files); err != nil {
		t.Fatal(err)
	}
	got := &Result{Files: files}
	if want := len(res.Files); got.Stored() != want || unknownCommits(files) != 0 {
		t.Errorf("stored %d (%d unknown), want %d: the interrupted COMMIT's trace is in the file", got.Stored(), unknownCommits(files), want)
	}
	if other := files[len(files)-1]; other.Status != StatusFailed {
		t.Errorf("the COMMIT that met the invalidated warehouse: %s, want failed", other.Status)
	}
	if line := warehouseCause(interrupted, files); !strings.HasSuffix(line, "Interrupted! (the trace is stored)") {
		t.Errorf("cause line %q does not say the named file's trace is stored", line)
	}
	if err := w.DB.PingContext(ctx); err == nil {
		t.Error("the invalidated warehouse is still open")
	}
}

// TestInterruptedCountsUnsettledCommits: an ingest stopped by Ctrl-C and a
// warehouse failure at once, whose file could not be opened again to
// settle a COMMIT the failure left in doubt, says so in its interrupted
// line, as the warehouse failure's own line does; a settled one counts as
// what the file holds, and a plain interruption's line is unchanged.
func TestInterruptedCountsUnsettledCommits(t *testing.T) {
	t.Parallel()
	unknown := func(settled bool) FileResult {
		return FileResult{Path: "b.trace.json", Status: StatusFailed, TraceID: 7,
			Err: &dbError{&commitUnknown{id: 7, err: errors.New("b.trace.json: commit: context canceled"), settled: settled}}}
	}
	stored := FileResult{Path: "a.trace.json", Status: StatusIngested}
	failed := FileResult{Path: "c.trace.json", Status: StatusFailed, Err: errors.New("c.trace.json: context canceled")}
	why := errors.New("open w.duckdb again to see which traces it holds: IO Error: No space left on device")
	for _, c := range []struct {
		files     []FileResult
		unsettled error
		want      string
	}{
		{[]FileResult{stored, unknown(false), failed}, why,
			"interrupted: 1 of 3 file(s) stored, nothing partial; 1 more may be stored: " + why.Error() + "; run the same command again to finish"},
		{[]FileResult{stored, unknown(false), failed}, nil,
			"interrupted: 1 of 3 file(s) stored, nothing partial; 1 more may be stored: the warehouse could not be asked; run the same command again to finish"},
		{[]FileResult{stored, unknown(true), failed}, nil,
			"interrupted: 1 of 3 file(s) stored, nothing partial; run the same command again to finish"},
		{[]FileResult{stored, failed}, nil,
			"interrupted: 1 of 2 file(s) stored, nothing partial; run the same command again to finish"},
	} {
		r := &Result{Files: c.files}
		if got := r.interrupted(c.unsettled).Error(); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
	if got, want := (&Result{Files: []FileResult{stored, failed}}).Interrupted().Error(),
		"interrupted: 1 of 2 file(s) stored, nothing partial; run the same command again to finish"; got != want {
		t.Errorf("Interrupted: %q, want %q", got, want)
	}
}
