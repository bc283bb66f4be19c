package lake

import (
	"context"
	"errors"
	"fmt"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
)

// Ingest ingests trace files straight into the lake at dir, with no
// warehouse file: the traces go through the ordinary ingest into a
// throw-away in-memory warehouse (aggregates.FinishPerRun saves their overlap and
// step aggregates), which Write then copies into the lake. Files whose
// content is already in the lake are skipped before they are read.
//
// Processes on many machines may ingest different files into one
// directory at once: no lock is taken, no file is written twice under one
// name with different content, and each trace appears with its commit.
// The ingest result reports every file; the write result every trace.
// engine sets up the in-memory warehouse (its Threads).
func Ingest(ctx context.Context, dir string, paths []string, opt ingest.Options, cat *catalog.Catalog, engine schema.Options) (*ingest.Result, *WriteResult, error) {
	if opt.Replace {
		return nil, nil, errors.New("a lake's traces never change: --replace does not apply to a lake")
	}
	if v, err := readVersion(dir); err == nil {
		bin, err := binaryVersion()
		if err != nil {
			return nil, nil, err
		}
		if v > bin {
			return nil, nil, &NewerError{Lake: dir, Version: v, Binary: bin}
		}
	}
	w, err := schema.Open(ctx, schema.Memory, engine)
	if err != nil {
		if ctx.Err() != nil {
			// stopped while setting up: no file was read
			return nil, nil, fmt.Errorf("interrupted before any file was read: nothing written to the lake; run the same command again: %w", ctx.Err())
		}
		return nil, nil, err
	}
	defer w.Close()
	opt.Known = func(hash string) (bool, error) {
		// a damaged trace is read and written again
		whole, _, err := committedWhole(dir, hash)
		return whole, err
	}
	res, err := ingest.Ingest(ctx, w, paths, opt)
	if err == nil {
		err = aggregates.FinishPerRun(ctx, w.DB, cat)
	}
	if err != nil {
		return res, nil, interrupted(ctx, err, res, nil)
	}
	wr, err := Write(ctx, w.DB, dir, WriteOptions{})
	reconcile(res, wr)
	return res, wr, interrupted(ctx, err, res, wr)
}

// reconcile makes the ingest result say what the lake got: a file whose
// trace another process put in the lake meanwhile (under this run or
// another) was not ingested by this one, but is already there.
func reconcile(res *ingest.Result, wr *WriteResult) {
	if res == nil || wr == nil {
		return
	}
	byID := map[int64]TraceResult{}
	for _, t := range wr.Traces {
		byID[t.SourceID] = t
	}
	for i, f := range res.Files {
		t, ok := byID[f.TraceID]
		if f.Status != ingest.StatusIngested || !ok || t.Status == StatusWritten {
			continue
		}
		f.Status = ingest.StatusAlready
		f.Events, f.GPUEvents, f.JSONBytes, f.Elapsed = 0, 0, 0, 0
		f.Reason = "written into the lake meanwhile by another process"
		if t.Status == StatusOtherRun {
			f.Reason += ", under run " + t.LakeRun
		}
		res.Files[i] = f
	}
}

// interrupted rewords the error of an interrupted lake ingest to count
// what the lake holds (ingest's own message counts the files stored in the
// throw-away warehouse, which the lake may not have).
func interrupted(ctx context.Context, err error, res *ingest.Result, wr *WriteResult) error {
	if err == nil || ctx.Err() == nil || res == nil {
		return err
	}
	n := 0
	for _, f := range res.Files {
		if f.Status == ingest.StatusAlready {
			n++
		}
	}
	if wr != nil {
		n += wr.Written()
	}
	return fmt.Errorf("interrupted: %d of %d file(s) in the lake, nothing partial; run the same command again to finish: %w",
		n, len(res.Files), ctx.Err())
}
