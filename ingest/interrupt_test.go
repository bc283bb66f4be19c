package ingest

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/schema"
)

// cancelAt cancels the ingest's context once every byte was read: the
// interrupt lands after the last file's load began (often after commits).
type cancelAt struct {
	mu          sync.Mutex
	total, seen int64
	cancel      context.CancelFunc
}

func (p *cancelAt) Start(total int64) { p.total = total }
func (p *cancelAt) Add(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen += n; p.seen >= p.total {
		p.cancel()
	}
}

// TestInterruptedIngestCountsAndResumes (issue 9 item 5): an interrupt
// reports how many files were stored (never "nothing" when some were), the
// re-run stores the rest and says the others are already there, and the
// work after the commits (saved overlap) is finished by that re-run. With
// DuckDB on one thread and on two: with two, its own threads call the Go
// table function that inserts the frames (schema.InsertRows) while the
// interrupt lands, which must fail the insert, not hang it.
func TestInterruptedIngestCountsAndResumes(t *testing.T) {
	t.Parallel()
	for _, threads := range []int{1, 2} {
		t.Run(strconv.Itoa(threads)+" thread(s)", func(t *testing.T) {
			t.Parallel()
			interruptAndResume(t, threads)
		})
	}
}

func interruptAndResume(t *testing.T, threads int) {
	ctx := context.Background()
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// two of sglang-llama's files (its decode traces): the interrupt lands
	// in the second's load, the first stored
	const sg = "../testdata/demo/sglang-llama/2025-07-04_18-26-43/1751653603.1234567-"
	paths := []string{sg + "TP-0-DECODE.trace.json.gz", sg + "TP-1-DECODE.trace.json.gz"}
	ictx, cancel := context.WithCancel(ctx)
	res, err := Ingest(ictx, w, paths, Options{Jobs: 1, Progress: &cancelAt{cancel: cancel}})
	cancel()
	if err == nil {
		t.Fatal("no error after an interrupt")
	}
	var stored int64
	if err := w.DB.QueryRow(`SELECT count(*) FROM traces`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	var claimed int
	for _, f := range res.Files {
		if f.Status == StatusIngested {
			claimed++
		}
	}
	if int64(claimed) != stored {
		t.Errorf("result says %d stored, the warehouse holds %d", claimed, stored)
	}
	want := "interrupted: " + strconv.FormatInt(stored, 10) + " of 2 file(s) stored"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want it to start %q", err, want)
	}
	// The interrupted command never reached Finish: the re-run does it.
	res, err = Ingest(ctx, w, paths, Options{Jobs: 2})
	if err != nil || res.Failed() != 0 {
		t.Fatalf("re-run: %v", err)
	}
	already := 0
	for _, f := range res.Files {
		if f.Status == StatusAlready {
			already++
		}
	}
	if int64(already) != stored {
		t.Errorf("re-run: %d already ingested, %d were stored", already, stored)
	}
	if err := Finish(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatal(err)
	}
	// (the one run, labelled by its files' directory: a re-run that made
	// another would count two)
	var saved bool
	if err := w.DB.QueryRow(`SELECT count(*) = 1 FROM kernel_overlap_runs o JOIN runs r USING (run_id)
		WHERE o.fingerprint = _overlap_fingerprint(r.run_id)`).Scan(&saved); err != nil || !saved {
		t.Errorf("overlap not saved by the re-run (%v)", err)
	}
}
