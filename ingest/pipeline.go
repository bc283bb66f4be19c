package ingest

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// decode runs the split -> decode pipeline over one file and hands batches
// to sink in stream order.
func (l *loader) decode(ctx context.Context, path string, r io.Reader, t *traceState, sink func(*decoded) error) error {
	g, gctx := errgroup.WithContext(ctx)
	raw := make(chan *rawBatch, 2*l.decoders)
	out := make(chan *decoded, 2*l.decoders)
	pool := make(chan []byte, 4*l.decoders+4)
	sp := newSplitter(r, path, pool)
	g.Go(safely(path, func() error {
		defer close(raw)
		return sp.run(gctx, raw)
	}))
	var live atomic.Int32
	live.Store(int32(l.decoders))
	for i := 0; i < l.decoders; i++ {
		g.Go(safely(path, func() error {
			defer func() {
				if live.Add(-1) == 0 {
					close(out)
				}
			}()
			d := newDecoder(path, l.names)
			for b := range raw {
				res, err := d.decode(b)
				if err != nil {
					return err
				}
				select {
				case pool <- b.data:
				default:
				}
				select {
				case out <- res:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		}))
	}
	g.Go(safely(path, func() error {
		pending := map[int]*decoded{}
		next := 0
		for b := range out {
			pending[b.seq] = b
			for {
				nb, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				if err := sink(nb); err != nil {
					return err
				}
			}
		}
		if gctx.Err() == nil && len(pending) > 0 {
			return fmt.Errorf("%s: internal error: %d batches out of order", path, len(pending))
		}
		return nil
	}))
	err := g.Wait()
	t.meta = sp.meta
	t.jsonBytes = sp.total
	if err != nil {
		// Report the file's own problem rather than the cancellation it caused.
		return err
	}
	return nil
}
