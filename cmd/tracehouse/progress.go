package main

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/tracehouse/tracehouse/ingest"
)

// withProgress adds to an ingest's options a progress bar on stderr (only on
// a terminal) and notices on stderr; done clears the bar.
func withProgress(ios *IOStreams, opt ingest.Options) (_ ingest.Options, done func()) {
	opt.Notice = func(msg string) { fmt.Fprintf(ios.ErrOut, "note: %s\n", oneLine(msg)) }
	if !ios.ErrTTY {
		return opt, func() {}
	}
	b := &bar{w: ios.ErrOut}
	opt.Progress = b
	return opt, b.finish
}

// bar is the ingest progress bar: bytes read of the total input.
type bar struct {
	w io.Writer
	b *progressbar.ProgressBar
}

func (b *bar) Start(total int64) {
	b.b = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetDescription("ingest"),
		progressbar.OptionShowBytes(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

func (b *bar) Add(n int64) {
	if b.b != nil {
		_ = b.b.Add64(n)
	}
}

func (b *bar) finish() {
	if b.b != nil {
		_ = b.b.Finish()
	}
}
