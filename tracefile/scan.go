package tracefile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/tracehouse/tracehouse/ingest/decode"
	"github.com/tracehouse/tracehouse/parseerr"
)

// scan streams a trace through the split -> decode pipeline: one goroutine
// decompresses and splits, workers decode batches in parallel (each with its
// own state from newWorker), and sink receives the results on the calling
// goroutine in stream order. Memory is a few batches per worker.
func scan[R any](ctx context.Context, path string, workers int,
	newWorker func() func(*decode.Batch) (R, error),
	sink func(*decode.Batch, R) error) (decode.Layout, error) {
	rc, _, err := decode.Open(path, nil)
	if err != nil {
		return decode.Layout{}, fileError(path, err)
	}
	defer rc.Close()
	workers = max(1, workers)
	g, gctx := errgroup.WithContext(ctx)
	raw := make(chan *decode.Batch, workers)
	type result struct {
		b *decode.Batch
		r R
	}
	out := make(chan result, 2*workers)
	var layout decode.Layout
	g.Go(func() error {
		defer close(raw)
		var err error
		layout, err = decode.SplitEvents(gctx, rc, path, raw)
		return err
	})
	var live atomic.Int32
	live.Store(int32(workers))
	for range workers {
		g.Go(decode.Guard(path, func() error {
			defer func() {
				if live.Add(-1) == 0 {
					close(out)
				}
			}()
			work := newWorker()
			for b := range raw {
				r, err := work(b)
				if err != nil {
					return err
				}
				select {
				case out <- result{b, r}:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		}))
	}
	g.Go(decode.Guard(path, func() error {
		pending := map[int]result{}
		next := 0
		for res := range out {
			pending[res.b.Seq] = res
			for {
				p, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				if err := sink(p.b, p.r); err != nil {
					return err
				}
				p.b.Recycle()
			}
		}
		return nil
	}))
	err = g.Wait()
	// A small file can be split, decoded and sunk without any goroutine
	// blocking long enough to see a cancellation, so the caller's context is
	// asked once more: a cancelled run never reaches its commit.
	if cerr := ctx.Err(); cerr != nil {
		return layout, cerr
	}
	return layout, err
}

// fileError names the file in an error that does not already.
func fileError(path string, err error) error {
	var pe *parseerr.Error
	if errors.As(err, &pe) {
		return err
	}
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return fmt.Errorf("%s: %w", path, pathErr.Err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// eventError is a damaged event, positioned as ingest positions them.
func eventError(path string, event, off int64, field string, cause error, detail string) error {
	return &parseerr.Error{File: path, Event: event, Offset: off, Field: field, Err: &causeError{cause, detail}}
}

type causeError struct {
	cause error
	text  string
}

func (e *causeError) Error() string { return e.text }
func (e *causeError) Unwrap() error { return e.cause }
