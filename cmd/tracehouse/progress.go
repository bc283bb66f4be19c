package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/ingest"
)

// Phases the progress display names besides the finish's own (aggregates.Phase*).
const (
	// phaseRead is the bar of bytes read.
	phaseRead = "reading"
	// phaseLoad follows once every byte is read: the attribution sweep and
	// the SQL that loads the last files still run.
	phaseLoad = "attributing and loading"
)

// withProgress adds to an ingest's options a progress display on stderr
// (only on a terminal) and notices on stderr. The display is a bar of the
// bytes read, drawn at 0% as soon as the total is known, then a spinner
// naming each later phase: attributing and loading once every byte is
// read, then those Finish reports through the returned context (the
// catalog, overlap, step aggregates, fuse-pattern rows), so that a long
// ingest never looks stuck. Pass the context to the ingest and to
// target.Finish / target.Resolve; done clears the display. Notices wrap
// to the text width as every message does.
func withProgress(ctx context.Context, c common, opt ingest.Options) (_ context.Context, _ ingest.Options, done func()) {
	ios := c.IO
	opt.Notice = func(msg string) { c.message("note: " + oneLine(msg)) }
	if !ios.ErrTTY {
		return ctx, opt, func() {}
	}
	b := &bar{w: ios.ErrOut}
	opt.Progress = b
	return aggregates.WithPhaser(ctx, b), opt, b.finish
}

// bar is the progress display: ingest.ParsedProgress and aggregates.Phaser.
// Workers call Add and Parsed concurrently, hence the mutex.
//
// The bar fills with the bytes read from disk (the total is known from the
// start), but the rate it shows is of the JSON parsed: for gzip traces,
// several times what is read, and what the ingest's speed is about.
type bar struct {
	w io.Writer

	mu          sync.Mutex
	b           *progressbar.ProgressBar
	phase       string
	total, read int64
	parsed      int64
	started     time.Time
	described   time.Time
	// done: the command is past the ingest; a late phase draws nothing
	// (no spinner would be left ticking).
	done bool
}

// describeEvery throttles the description's figures.
const describeEvery = 250 * time.Millisecond

// readDescription is the bar's text: bytes read of the total, and the
// rate of JSON parsed once a second has passed.
func (b *bar) readDescription(now time.Time) string {
	d := fmt.Sprintf("ingest: %s %s of %s", phaseRead, sizeText(b.read), sizeText(b.total))
	if el := now.Sub(b.started); el >= time.Second && b.parsed > 0 {
		d += fmt.Sprintf(", %s/s of JSON parsed", sizeText(int64(float64(b.parsed)/el.Seconds())))
	}
	return d
}

// sizeText is a byte count for people: "512 B", "70 kB", "12 MB".
func sizeText(n int64) string {
	if n < 0 {
		n = 0
	}
	return humanize.Bytes(uint64(n))
}

// Start draws the bar of bytes at once, before any byte is read (hashing
// and opening the first file take a while on large traces).
func (b *bar) Start(total int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.total, b.read = total, 0
	if total <= 0 {
		b.spin(phaseRead)
		return
	}
	b.clear()
	b.phase = phaseRead
	b.started, b.parsed = time.Now(), 0
	b.described = b.started
	b.b = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetDescription(b.readDescription(b.started)),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	_ = b.b.RenderBlank()
}

// Parsed counts JSON bytes parsed, for the rate shown.
func (b *bar) Parsed(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.parsed += n
}

func (b *bar) Add(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.phase != phaseRead {
		return
	}
	b.read += n
	if b.b != nil {
		if now := time.Now(); now.Sub(b.described) >= describeEvery {
			b.described = now
			b.b.Describe(b.readDescription(now))
		}
		_ = b.b.Add64(n)
	}
	if b.read >= b.total {
		b.spin(phaseLoad)
	}
}

// Phase replaces the display with a spinner naming the phase (its elapsed
// time ticking by itself) until the next phase or the end.
func (b *bar) Phase(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if name != b.phase && !b.done {
		b.spin(name)
	}
}

// spin shows a spinner for phase; b.mu is held.
func (b *bar) spin(phase string) {
	b.clear()
	b.phase = phase
	b.b = progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetDescription("ingest: "+phase),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionClearOnFinish(),
	)
	_ = b.b.RenderBlank()
}

// clear finishes and erases what is shown; b.mu is held. A finished
// spinner's ticker stops drawing.
func (b *bar) clear() {
	if b.b != nil {
		_ = b.b.Finish()
		b.b = nil
	}
}

func (b *bar) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clear()
	b.done = true
}

// summarize prints one line per failed file and a total, and turns failures
// into exit status 1.
func summarize(io *IOStreams, res *ingest.Result) error {
	var ingested, already, skipped, failed int
	var events, gpu, bytes int64
	var elapsed time.Duration
	for _, r := range res.Files {
		switch r.Status {
		case ingest.StatusIngested:
			ingested++
			events += r.Events
			gpu += r.GPUEvents
			bytes += r.JSONBytes
			elapsed += r.Elapsed
		case ingest.StatusAlready:
			already++
		case ingest.StatusSkipped:
			skipped++
		case ingest.StatusFailed:
			failed++
			fmt.Fprintf(io.ErrOut, "error: %s\n", oneLine(r.Err.Error()))
		}
	}
	fmt.Fprintf(io.ErrOut, "ingested %d file(s) (%d events, %d GPU events, %.1f MB of JSON)", ingested, events, gpu, float64(bytes)/1e6)
	if already > 0 {
		fmt.Fprintf(io.ErrOut, ", %d already ingested", already)
	}
	if skipped > 0 {
		fmt.Fprintf(io.ErrOut, ", %d skipped", skipped)
	}
	if failed > 0 {
		fmt.Fprintf(io.ErrOut, ", %d failed", failed)
	}
	fmt.Fprintln(io.ErrOut)
	if failed > 0 {
		return &silentError{exitError}
	}
	return nil
}
