package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/tracehouse/tracehouse/schema"
)

// DuckDBMemoryPerJob is DuckDB's memory_limit, per file loading at once,
// while files load into a warehouse file. A trace's rows stay uncommitted
// until its last statement (one transaction per file), and DuckDB held
// them, and the hash tables of the linking statements, in memory: about
// 330 MiB for a 1 GB trace. Bounded, it writes them to the database file
// and its temporary directory instead (measured on 1 GB of JSON: peak
// 498 -> 316-336 MiB, CPU within the noise). Should a trace not fit, the
// bound is lifted and the trace loaded again (duckBound.lift).
const DuckDBMemoryPerJob = 160 // MiB

// duckBound is DuckDB's memory bound during one ingest. A nil *duckBound
// is no bound (an in-memory warehouse has nowhere to write rows to).
type duckBound struct {
	db   schema.Execer
	prev string // the caller's limit, put back after

	mu     sync.Mutex
	lifted bool
}

// boundDuckDB bounds DuckDB's memory on a file warehouse to limitMiB;
// restore puts the caller's limit back.
func boundDuckDB(ctx context.Context, w *schema.Warehouse, limitMiB int) (*duckBound, error) {
	if w.Path == "" || w.Path == schema.Memory {
		return nil, nil
	}
	b := &duckBound{db: w.DB}
	if err := w.DB.QueryRowContext(ctx, `SELECT current_setting('memory_limit')`).Scan(&b.prev); err != nil {
		return nil, fmt.Errorf("read DuckDB's memory limit: %w", err)
	}
	limit := fmt.Sprintf("%dMiB", limitMiB)
	if _, err := w.DB.ExecContext(ctx, `SET memory_limit = '`+limit+`'`); err != nil {
		// refused, and kept all the same (BoundFinish): put back
		return nil, errors.Join(fmt.Errorf("bound DuckDB's memory: %w", err), b.set(ctx))
	}
	return b, nil
}

// lift puts the caller's limit back for the rest of the ingest, for a file
// to be loaded again; false when there is no bound to lift (a file that
// ran out of memory without one fails), or lifting failed. Each file is
// loaded again at most once, so a trace that does not fit the caller's
// limit either fails after its second try.
func (b *duckBound) lift(ctx context.Context) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.lifted {
		if err := b.set(ctx); err != nil {
			return false
		}
		b.lifted = true
	}
	return true
}

// restore puts the caller's limit back.
func (b *duckBound) restore(ctx context.Context) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.set(ctx)
}

func (b *duckBound) set(ctx context.Context) error {
	// The ingest's context may be cancelled by now; the limit still goes back.
	if _, err := b.db.ExecContext(context.WithoutCancel(ctx), `SET memory_limit = '`+b.prev+`'`); err != nil {
		return fmt.Errorf("restore DuckDB's memory limit: %w", err)
	}
	return nil
}

// isOutOfMemory reports whether err is DuckDB running out of memory. A
// statement's error says so by its type; the appender's does not (it
// comes back as "could not close appender: Failed to append: failed to
// allocate data of size ..." or "... could not allocate block of size
// ..."), so its message is read too.
func isOutOfMemory(err error) bool {
	var de *duckdb.Error
	if errors.As(err, &de) && de.Type == duckdb.ErrorTypeOutOfMemory {
		return true
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		return false // the trace's own damage, whatever its text quotes
	}
	msg := err.Error()
	return strings.Contains(msg, "Out of Memory Error") || strings.Contains(msg, "failed to allocate data of size") ||
		strings.Contains(msg, "could not allocate block of size") || strings.Contains(msg, "failed to pin block")
}

// FinishBound is DuckDB's memory bound during a finish (BoundFinish),
// held by the finish's plan; a nil *FinishBound is no bound.
type FinishBound struct{ b *duckBound }

// BoundFinish bounds DuckDB's memory to limitMiB for a finish on a file
// warehouse (aggregates.Finish; an in-memory one is left alone: it has
// nowhere to spill to but memory). A save that runs out of memory under
// the bound lifts it (FinishBound.Lift); Restore puts the caller's limit
// back. held says that DuckDB already held more than the bound and could
// not free it: the finish then goes on under the caller's limit,
// unbounded (a nil bound), which the caller should say, as a lifted bound
// is said. It lives here, beside the bound of a loading file, because
// both are one mechanism.
func BoundFinish(ctx context.Context, db *sql.DB, limitMiB int) (_ *FinishBound, held bool, _ error) {
	var path sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT path FROM duckdb_databases() WHERE database_name = current_database()`).Scan(&path); err != nil {
		return nil, false, fmt.Errorf("find the warehouse's file: %w", err)
	}
	if !path.Valid || path.String == "" || path.String == schema.Memory {
		return nil, false, nil
	}
	b := &duckBound{db: db}
	if err := db.QueryRowContext(ctx, `SELECT current_setting('memory_limit')`).Scan(&b.prev); err != nil {
		return nil, false, fmt.Errorf("read DuckDB's memory limit: %w", err)
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf(`SET memory_limit = '%dMiB'`, limitMiB)); err != nil {
		// DuckDB refuses a limit it cannot free memory down to, and
		// keeps it all the same (1.5): the caller's limit goes back.
		if rerr := b.set(ctx); rerr != nil {
			return nil, false, errors.Join(fmt.Errorf("bound DuckDB's memory: %w", err), rerr)
		}
		if isOutOfMemory(err) {
			return nil, true, nil
		}
		return nil, false, fmt.Errorf("bound DuckDB's memory: %w", err)
	}
	return &FinishBound{b}, false, nil
}

// Lift says whether a save that failed with err should be made again: err
// is DuckDB running out of memory under the bound, and the bound is now
// lifted (for the rest of the finish).
func (f *FinishBound) Lift(ctx context.Context, err error) bool {
	return f != nil && isOutOfMemory(err) && f.b.lift(ctx)
}

// Restore puts the caller's limit back.
func (f *FinishBound) Restore(ctx context.Context) error {
	if f == nil {
		return nil
	}
	return f.b.restore(ctx)
}
