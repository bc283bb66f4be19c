package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/synth"
)

// lockedBuffer is a stderr that a spinner's ticker and the command can
// write at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestProgressFirstTick: the bar is drawn at 0% by Start, before a byte is
// read; the last byte turns it into the attributing-and-loading spinner;
// a phase replaces it; after done nothing more is drawn (no spinner left
// ticking, no late phase).
func TestProgressFirstTick(t *testing.T) {
	t.Parallel()
	var w lockedBuffer
	b := &bar{w: &w}
	b.Start(4096)
	if out := w.String(); !strings.Contains(out, "ingest: reading") || !strings.Contains(out, "0%") {
		t.Fatalf("after Start, before any byte: %q; want the bar at 0%%", out)
	}
	b.Add(1024)
	if strings.Contains(w.String(), phaseLoad) {
		t.Errorf("the load phase shown with bytes left to read")
	}
	b.Add(3072)
	if !strings.Contains(w.String(), "ingest: "+phaseLoad) {
		t.Errorf("every byte read, and no %q: %q", phaseLoad, w.String())
	}
	b.Phase(aggregates.PhaseOverlap)
	if !strings.Contains(w.String(), "ingest: "+aggregates.PhaseOverlap) {
		t.Errorf("no %q: %q", aggregates.PhaseOverlap, w.String())
	}
	b.finish()
	b.Phase("late")
	n := len(w.String())
	time.Sleep(300 * time.Millisecond) // three spinner ticks
	if out := w.String(); len(out) != n || strings.Contains(out, "late") {
		t.Errorf("drawn after done: %q", out[n:])
	}
}

// TestProgressPhases: `ingest` of a small trace on a terminal shows, in
// order, the bar of bytes and each phase after it, down to target.Finish's
// saves side by side under one name. (Off a terminal it shows none of
// them: every test's ingest runs off a terminal, and those that hold its
// whole stderr to a line, such as TestLakeEndToEnd's "ingested 16
// file(s)" prefix or TestDiskFullWhileSaving's one line, fail on a bar.)
func TestProgressPhases(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if _, err := synth.Generate(synth.Options{Dir: root, Run: "p1", Framework: synth.SGLang, Stage: synth.StageDecode,
		Steps: 6, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	phases := []string{phaseRead, phaseLoad, aggregates.PhaseCatalog, aggregates.PhaseSaving}
	for _, tty := range []bool{true} {
		var errOut lockedBuffer
		ios := &IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &errOut, ErrTTY: tty}
		db := filepath.Join(t.TempDir(), "p.duckdb")
		if code := run([]string{"--db", db, "ingest", root}, ios, testEnv); code != 0 {
			t.Fatalf("tty %v: exit %d: %s", tty, code, errOut.String())
		}
		out := errOut.String()
		if !strings.Contains(out, "ingested 1 file(s)") {
			t.Errorf("tty %v: no summary: %q", tty, out)
		}
		for _, p := range []string{aggregates.PhaseOverlap, aggregates.PhaseSteps, aggregates.PhaseFusion, aggregates.PhaseOverlapRows} {
			if strings.Contains(out, "ingest: "+p+" ") {
				t.Errorf("phase %q shown on its own while the saves run side by side:\n%q", p, out)
			}
		}
		at := -1
		for _, p := range phases {
			i := strings.Index(out, "ingest: "+p)
			if i <= at {
				t.Errorf("phase %q at %d, after the previous one at %d; want each in order:\n%q", p, i, at, out)
			}
			at = max(at, i)
		}
		// The display is cleared before the summary.
		if i := strings.LastIndex(out, "ingest: "); i > strings.Index(out, "ingested 1 file(s)") {
			t.Errorf("progress drawn after the summary: %q", out)
		}
	}
}

// parsedCounter records what an ingest reports to a ParsedProgress.
type parsedCounter struct {
	mu                 sync.Mutex
	total, read, parse int64
}

func (p *parsedCounter) Start(total int64) { p.total = total }
func (p *parsedCounter) Add(n int64)       { p.mu.Lock(); p.read += n; p.mu.Unlock() }
func (p *parsedCounter) Parsed(n int64)    { p.mu.Lock(); p.parse += n; p.mu.Unlock() }

// TestProgressRateOfParsedJSON: the bar's rate is of the JSON parsed (for
// gzip traces several times the bytes read), not of the bytes read: ingest
// tells a ParsedProgress every decompressed byte (their sum is the traces'
// JSON size), and the description shows that rate.
func TestProgressRateOfParsedJSON(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if _, err := synth.Generate(synth.Options{Dir: root, Run: "p1", Framework: synth.SGLang, Stage: synth.StageDecode,
		Steps: 6, Seed: 5, Gzip: true}); err != nil {
		t.Fatal(err)
	}
	w, err := schema.Open(context.Background(), schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p := &parsedCounter{}
	res, err := ingest.Ingest(context.Background(), w, []string{root}, ingest.Options{Jobs: 1, Progress: p})
	if err != nil {
		t.Fatal(err)
	}
	var jsonBytes int64
	for _, f := range res.Files {
		jsonBytes += f.JSONBytes
	}
	if jsonBytes == 0 || p.parse != jsonBytes || p.read != p.total || p.parse < 3*p.read {
		t.Errorf("parsed %d (JSON of the traces %d), read %d of %d", p.parse, jsonBytes, p.read, p.total)
	}

	b := &bar{total: 69_000_000, read: 12_000_000, parsed: 100_000_000, started: time.Unix(1000, 0)}
	if got, want := b.readDescription(time.Unix(1001, 0)), "ingest: reading 12 MB of 69 MB, 100 MB/s of JSON parsed"; got != want {
		t.Errorf("description %q, want %q", got, want)
	}
	if got, want := b.readDescription(time.Unix(1000, 500e6)), "ingest: reading 12 MB of 69 MB"; got != want {
		t.Errorf("before a second: %q, want %q", got, want)
	}
	if got := sizeText(70_000); got != "70 kB" {
		t.Errorf("sizeText(70000) = %q", got)
	}
}
