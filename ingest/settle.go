package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tracehouse/tracehouse/schema"
)

// settleUnknown settles the files whose COMMIT outcome the warehouse could
// not tell (*commitUnknown): a trace the warehouse holds is stored
// (StatusIngested, its error kept for the cause line), one it does not
// hold failed. It asks w first; a warehouse DuckDB invalidated answers
// nothing and must be restarted, so w.DB is then closed and the file
// opened again read-only, which replays the write-ahead log the failed
// COMMITs may have written (and writes nothing, so a full disk does not
// stop it). The error is why the file could not be asked; those files
// stay failed.
func settleUnknown(ctx context.Context, w *schema.Warehouse, files []FileResult) error {
	ctx = context.WithoutCancel(ctx)
	var ids []any
	for _, f := range files {
		if unknownCommit(f) {
			ids = append(ids, f.TraceID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	held, err := storedTraces(ctx, w, ids)
	if err != nil {
		if w.Path == "" || w.Path == schema.Memory {
			return err
		}
		// Invalidated: closed, nothing more can be asked of this instance.
		w.DB.Close()
		ro, oerr := schema.Open(ctx, w.Path, schema.Options{ReadOnly: true, NoTemplate: true, Threads: 1})
		if oerr != nil {
			return fmt.Errorf("open %s again to see which traces it holds: %w", w.Path, oerr)
		}
		held, err = storedTraces(ctx, ro, ids)
		err = errors.Join(err, ro.Close())
		if err != nil {
			return fmt.Errorf("open %s again to see which traces it holds: %w", w.Path, err)
		}
	}
	for i, f := range files {
		var u *commitUnknown
		if unknownCommit(f) && errors.As(f.Err, &u) {
			u.settled = true
			if held[f.TraceID] {
				files[i].Status = StatusIngested
			}
		}
	}
	return nil
}

// unknownCommit says whether f failed at a COMMIT whose outcome is still
// unknown.
func unknownCommit(f FileResult) bool {
	var u *commitUnknown
	return f.Status == StatusFailed && errors.As(f.Err, &u) && !u.settled
}

// unknownCommits counts the files whose COMMIT outcome is still unknown.
func unknownCommits(files []FileResult) int {
	n := 0
	for _, f := range files {
		if unknownCommit(f) {
			n++
		}
	}
	return n
}

// storedTraces says which of ids the warehouse holds.
func storedTraces(ctx context.Context, w *schema.Warehouse, ids []any) (map[int64]bool, error) {
	in := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")
	rows, err := w.DB.QueryContext(ctx, "SELECT trace_id FROM "+schema.Traces+" WHERE trace_id IN ("+in+")", ids...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	held := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		held[id] = true
	}
	return held, rows.Err()
}
