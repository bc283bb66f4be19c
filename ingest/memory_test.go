package ingest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestIngestRestoresMemoryLimit: DuckDB's memory limit is bounded while
// files load into a warehouse file, and the caller's limit is back after.
// The bound is forced (ingestBounded with no size below which it is left
// off): Ingest leaves it off for files under UnboundedLoadBytes, as the
// demo's are, and then neither the bound nor its restore was tested.
func TestIngestRestoresMemoryLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, limit := schematest.Limited(t)
	before := limit()
	// Two files keep both jobs busy; the whole demo (16 files) tested the
	// same bound for three times the CPU time, one run's four files for
	// twice.
	const sg = "../testdata/demo/sglang-llama/2025-07-04_18-26-43/1751653603.1234567-"
	p := &limitSeen{read: limit}
	res, err := ingestBounded(ctx, w, []string{sg + "TP-0-DECODE.trace.json.gz", sg + "TP-1-DECODE.trace.json.gz"},
		Options{Jobs: 2, Progress: p}, DuckDBMemoryPerJob, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() != 0 {
		t.Fatalf("%d files failed", res.Failed())
	}
	if p.seen != "320.0 MiB" {
		t.Errorf("memory_limit while loading %q, want 320.0 MiB (two jobs)", p.seen)
	}
	if after := limit(); after != before {
		t.Fatalf("memory_limit after ingest %q, want %q", after, before)
	}
}

// limitSeen records DuckDB's memory limit as an ingest reads its first
// bytes.
type limitSeen struct {
	once sync.Once
	read func() string
	seen string
}

func (p *limitSeen) Start(int64) {}
func (p *limitSeen) Add(int64)   { p.once.Do(func() { p.seen = p.read() }) }

// TestDuckBoundLift: the bound is set, lifting it puts the
// caller's limit back, and only running out of memory counts as such.
func TestDuckBoundLift(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, limit := schematest.Limited(t)
	before := limit()
	b, err := boundDuckDB(ctx, w, 2*DuckDBMemoryPerJob)
	if err != nil {
		t.Fatal(err)
	}
	if got := limit(); got != "320.0 MiB" {
		t.Fatalf("bound for two jobs: memory_limit %q, want 320.0 MiB", got)
	}
	if !b.lift(ctx) {
		t.Fatal("lift: false with a bound in force")
	}
	if again := b.lift(ctx); !again {
		t.Fatal("lift again (a second file out of memory): false")
	}
	if got := limit(); got != before {
		t.Fatalf("after lift: memory_limit %q, want %q", got, before)
	}
	if err := b.restore(ctx); err != nil {
		t.Fatal(err)
	}
	// A bound DuckDB cannot free memory down to (0 MiB, HoldMemory) fails
	// the ingest, and the caller's limit stays: DuckDB keeps a limit it
	// refused.
	release := schematest.HoldMemory(t, w.DB)
	if _, err := boundDuckDB(ctx, w, 0); err == nil || !isOutOfMemory(err) {
		t.Fatalf("bound of 0 MiB over uncommitted rows: %v, want DuckDB's refusal", err)
	}
	if got := limit(); got != before {
		t.Fatalf("after a refused bound: memory_limit %q, want %q", got, before)
	}
	release()
	var none *duckBound
	if none.lift(ctx) || none.restore(ctx) != nil {
		t.Fatal("no bound: lift or restore did something")
	}
	for _, appender := range []error{
		errors.New("flush kernels: could not close appender: Failed to append: failed to allocate data of size 16.0 KiB"),
		errors.New("flush kernels: could not close appender: Failed to append: could not allocate block of size 32.0 KiB (1010.0 KiB/1.0 MiB used)"),
	} {
		if !isOutOfMemory(appender) {
			t.Fatalf("the appender running out of memory did not count as such: %v", appender)
		}
	}
	damage := &ParseError{File: "t.json", Err: errors.New(`event name "Out of Memory Error"`)}
	if isOutOfMemory(damage) || isOutOfMemory(errors.New("no such table")) {
		t.Fatal("a trace's damage or another database error counted as running out of memory")
	}
}

// TestIngestRetriesOutOfBound: a file that runs out of DuckDB's bound is
// loaded again without it, with a notice, and lands whole: the same rows
// as an ingest that was never bounded (demoTemplate's of the same run, not
// another ingest of it).
func TestIngestRetriesOutOfBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const path = "../testdata/demo/sglang-llama"
	count := func(w *schema.Warehouse) (n [3]int64) {
		t.Helper()
		err := w.DB.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM kernels WHERE run_id = r.run_id),
			(SELECT count(*) FROM py_frame_events JOIN traces t USING (trace_id) WHERE t.run_id = r.run_id),
			(SELECT count(*) FROM traces WHERE run_id = r.run_id)
			FROM runs r WHERE label = 'sglang-llama'`).Scan(&n[0], &n[1], &n[2])
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	want := count(schematest.Open(t, demoTemplate(t)))

	w := schematest.Open(t, "")
	var notices []string
	res, err := ingestBounded(ctx, w, []string{path}, Options{Jobs: 1, Notice: func(s string) { notices = append(notices, s) }}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() != 0 {
		for _, f := range res.Files {
			t.Log(f.Path, f.Err)
		}
		t.Fatalf("%d files failed", res.Failed())
	}
	retried := false
	for _, n := range notices {
		retried = retried || strings.Contains(n, "loading again without it")
	}
	if !retried {
		t.Fatalf("no file was loaded again under a 1 MiB bound; notices %q", notices)
	}
	if got := count(w); got != want || want[0] == 0 {
		t.Fatalf("kernels, frames, traces %v, want %v", got, want)
	}
}
