package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/tracehouse/tracehouse/ingest/decode"
)

// loadFiles loads every candidate in three stages joined by an errgroup (the
// shape of errgroup's MD5All example): a feeder hands out candidates, jobs
// loaders (each on its own connection) load one file at a time, and the
// calling goroutine collects their results into files, telling opt.Notice
// about files skipped on purpose. A damaged file fails alone: its result
// says why and the loaders go on. A warehouse failure (*dbError) stops the
// group: nothing more is handed out, loads in flight are cancelled and roll
// back, and the first such error is returned. A candidate never loaded
// keeps a zero result.
func loadFiles(ctx context.Context, db *sql.DB, cands []candidate, runs map[string]*runInfo, names *interner,
	opt Options, jobs int, env loadEnv, files []FileResult) error {
	g, gctx := errgroup.WithContext(ctx)
	work := make(chan int)
	g.Go(func() error {
		defer close(work)
		for i := range cands {
			select {
			case work <- i:
			case <-gctx.Done():
				return nil
			}
		}
		return nil
	})
	type loaded struct {
		i   int
		res FileResult
	}
	results := make(chan loaded)
	seen := &contentClaims{byHash: map[string]string{}}
	// Every decoder of every file shares the machine's cores.
	decoders := max(1, runtime.NumCPU()/jobs)
	for range jobs {
		g.Go(func() error {
			conn, err := db.Conn(gctx)
			if err != nil {
				return &dbError{fmt.Errorf("open a warehouse connection: %w", err)}
			}
			defer conn.Close()
			if err := prepareConn(gctx, conn); err != nil {
				return &dbError{err}
			}
			l := &loader{db: db, conn: conn, names: names, opt: opt, decoders: decoders, seen: seen, env: env, sole: jobs == 1}
			for i := range work {
				c := cands[i]
				var res FileResult
				if perr := decode.Guard(c.path, func() error {
					res = l.file(gctx, c, runs[runKey(c, opt)])
					return nil
				})(); perr != nil {
					res = FileResult{Path: c.path, Status: StatusFailed, Err: perr}
				}
				// The collector reads until every loader is done: never blocks for good.
				results <- loaded{i, res}
				var dbErr *dbError
				if errors.As(res.Err, &dbErr) {
					return dbErr
				}
			}
			return nil
		})
	}
	go func() {
		g.Wait()
		close(results)
	}()
	for r := range results {
		files[r.i] = r.res
		if r.res.Status == StatusSkipped && opt.Notice != nil {
			opt.Notice(r.res.Path + ": " + r.res.Reason)
		}
	}
	return g.Wait()
}

// decode runs the split -> decode pipeline over one file and hands batches
// to sink in stream order; with guess, the splitter cuts batches by guess
// where it can (decode.Splitter.Guess).
func (l *loader) decode(ctx context.Context, path string, r io.Reader, t *traceState, guess bool, sink func(*decoded) error) error {
	g, gctx := errgroup.WithContext(ctx)
	raw := make(chan *decode.Batch, 2*l.decoders)
	out := make(chan *decoded, 2*l.decoders)
	// Batches go back to the decoders once sunk, their row slices reused
	// rather than grown again for each batch (more than half of what a
	// large ingest allocated in Go).
	free := make(chan *decoded, 2*l.decoders+2)
	sp := decode.NewSplitter(r, path, make(chan []byte, 4*l.decoders+4))
	if guess {
		sp.Guess()
	}
	g.Go(decode.Guard(path, func() error {
		defer close(raw)
		return sp.Run(gctx, raw)
	}))
	var live atomic.Int32
	live.Store(int32(l.decoders))
	for i := 0; i < l.decoders; i++ {
		g.Go(decode.Guard(path, func() error {
			defer func() {
				if live.Add(-1) == 0 {
					close(out)
				}
			}()
			d := newDecoder(path, l.names)
			for b := range raw {
				var reuse *decoded
				select {
				case reuse = <-free:
				default:
				}
				res, err := d.decode(b, reuse)
				if err != nil {
					return err
				}
				b.Recycle()
				select {
				case out <- res:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		}))
	}
	g.Go(decode.Guard(path, func() error {
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
				select {
				case free <- nb:
				default:
				}
			}
		}
		if gctx.Err() == nil && len(pending) > 0 {
			return fmt.Errorf("%s: internal error: %d batches out of order", path, len(pending))
		}
		return nil
	}))
	err := g.Wait()
	t.meta = sp.Meta()
	t.jsonBytes = sp.Bytes()
	t.guessed = sp.Guessed()
	if err != nil {
		// Report the file's own problem rather than the cancellation it caused.
		return err
	}
	return nil
}
