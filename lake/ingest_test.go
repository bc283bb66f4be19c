package lake

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
)

// cancelWhenRead cancels the ingest once every byte was read.
type cancelWhenRead struct {
	mu          sync.Mutex
	total, seen int64
	cancel      context.CancelFunc
}

func (p *cancelWhenRead) Start(total int64) { p.total = total }
func (p *cancelWhenRead) Add(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen += n; p.seen >= p.total {
		p.cancel()
	}
}

// TestInterruptedLakeIngestCounts: an ingest --lake interrupted before its
// write says how many files the lake holds (none here; ingest's own count
// is of its throw-away warehouse), and the lake holds exactly that.
func TestInterruptedLakeIngestCounts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// two of sglang-llama's files (its smallest): the interrupt lands in
	// the second's load, after the first is stored in the throw-away
	// warehouse (one file alone was not stored there: a count of the
	// ingest's own then gave 0 as well)
	sg := demo + "/sglang-llama/2025-07-04_18-26-43/1751653603.1234567-"
	_, _, err := Ingest(ctx, dir, []string{sg + "TP-0-DECODE.trace.json.gz", sg + "TP-1-DECODE.trace.json.gz"},
		ingest.Options{Jobs: 1, Progress: &cancelWhenRead{cancel: cancel}}, catalog.Default(), schema.Options{Threads: 1})
	want := "interrupted: 0 of 2 file(s) in the lake, nothing partial; run the same command again to finish"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v\nwant %s", err, want)
	}
	traces, _ := filepath.Glob(filepath.Join(dir, "traces", "*.parquet"))
	for _, f := range traces {
		if filepath.Base(f) != schemaFile {
			t.Errorf("committed: %s", f)
		}
	}
}

// TestLakeIngestInterruptedAtStart: an ingest --lake interrupted while it
// sets up (before any file is read) says so and that the lake got nothing,
// not the engine's error about the statement it was running.
func TestLakeIngestInterruptedAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := Ingest(ctx, dir, []string{demo + "/sglang-llama"}, ingest.Options{Jobs: 1}, catalog.Default(), schema.Options{Threads: 1})
	want := "interrupted before any file was read: nothing written to the lake; run the same command again: context canceled"
	if err == nil || err.Error() != want || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v\nwant %s", err, want)
	}
	if traces, _ := filepath.Glob(filepath.Join(dir, "traces", "*.parquet")); len(traces) > 0 {
		t.Errorf("committed: %v", traces)
	}
}

// TestConcurrentLakeIngestReconciled: files a process ingested while
// another put the same traces into the lake under another run (the race
// of two concurrent 'ingest --lake --run alpha' / '--run beta') count as
// already there, not as ingested: the result matches what the lake got.
func TestConcurrentLakeIngestReconciled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	paths := []string{demo + "/trtllm-llama"}
	// beta wins the race
	if _, wr, err := Ingest(ctx, dir, paths, ingest.Options{Jobs: 1, Run: "beta"}, catalog.Default(), schema.Options{Threads: 1}); err != nil || wr.Written() == 0 {
		t.Fatalf("beta: %v", err)
	}
	// alpha read the files before beta committed them (here: beta's
	// commits are taken back, its claims stay): alpha's ingest stores them,
	// its write finds them claimed by beta
	markers, _ := filepath.Glob(filepath.Join(dir, "traces", "*.parquet"))
	for _, m := range markers {
		if filepath.Base(m) != schemaFile {
			if err := os.Remove(m); err != nil {
				t.Fatal(err)
			}
		}
	}
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	res, err := ingest.Ingest(ctx, w, paths, ingest.Options{Jobs: 1, Run: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if err := aggregates.FinishPerRun(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatal(err)
	}
	wr, err := Write(ctx, w.DB, dir, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reconcile(res, wr)
	n := 0
	for _, f := range res.Files {
		n++
		if f.Status != ingest.StatusAlready || f.Events != 0 || !strings.HasSuffix(f.Reason, "under run beta") {
			t.Errorf("%s: %s (%d events, %q)", f.Path, f.Status, f.Events, f.Reason)
		}
	}
	if n == 0 || wr.Written() != 0 {
		t.Errorf("%d files, %d written", n, wr.Written())
	}
}
