package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/tracehouse/tracehouse/schema"
)

// traceTx is the one transaction a trace file is loaded in (JSON and nsys
// alike): everything the file adds, and the removal of the trace it
// replaces, commits together or not at all.
type traceTx struct {
	conn  *sql.Conn
	ended bool // committed, or rolled back after a failed COMMIT
	// undone, when set, is called once the transaction is known rolled
	// back (interner.flushInto's requeue)
	undone func()
}

// beginTrace begins the file's transaction on conn and, when replace is a
// trace id, deletes that trace's rows inside it.
func beginTrace(ctx context.Context, conn *sql.Conn, replace int64) (*traceTx, error) {
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		endFailedBegin(ctx, conn)
		return nil, &dbError{fmt.Errorf("begin: %w", err)}
	}
	tx := &traceTx{conn: conn}
	if replace != 0 {
		for _, tbl := range append(traceTables, schema.Traces) {
			if _, err := conn.ExecContext(ctx, "DELETE FROM "+tbl+" WHERE trace_id = ?", replace); err != nil {
				err = &dbError{fmt.Errorf("replace trace %d: %w", replace, err)}
				tx.rollback(ctx, &err)
				return nil, err
			}
		}
	}
	return tx, nil
}

// commit commits the file's rows, trace id; path names the file in the
// error.
//
// COMMIT can fail although DuckDB made the commit: an interrupt that lands
// while it finishes (its checkpoint after the write-ahead log is written)
// fails the statement with the rows stored. So after a failed COMMIT the
// warehouse is asked whether the trace is there, and a stored trace counts
// as committed: an interrupted ingest then says how many files it stored
// as the warehouse holds them (one fewer was said before). A warehouse
// invalidated meanwhile cannot say (*commitUnknown): the ingest asks its
// file once it stops (settleUnknown).
func (tx *traceTx) commit(ctx context.Context, path string, id int64) error {
	_, err := tx.conn.ExecContext(ctx, "COMMIT")
	if err == nil {
		tx.ended = true
		return nil
	}
	err = fmt.Errorf("%s: commit: %w", path, err)
	if strings.Contains(err.Error(), durableText) {
		// The rows are stored and the warehouse is invalidated (so it
		// cannot be asked): the trace counts as stored, and the ingest
		// stops.
		tx.ended = true
		return &dbError{&storedThenFailed{id: id, err: err}}
	}
	stored, known := tx.stored(ctx, id)
	switch {
	case stored:
		return nil
	case !known:
		return &dbError{&commitUnknown{id: id, err: err}}
	}
	tx.wasUndone()
	return &dbError{err}
}

// stored ends the transaction after a failed COMMIT and says whether trace
// id is in the warehouse, and whether the warehouse could say (known): one
// invalidated by a fatal error, on this connection or another, answers
// nothing. A transaction still open (the COMMIT never ran) would show its
// own rows, so it is rolled back first; when COMMIT did end it, ROLLBACK
// fails harmlessly.
func (tx *traceTx) stored(ctx context.Context, id int64) (stored, known bool) {
	ctx = context.WithoutCancel(ctx)
	_, _ = tx.conn.ExecContext(ctx, "ROLLBACK") // (no transaction left is no error here)
	tx.ended = true                             // nothing left for the deferred rollback
	var n int64
	if err := tx.conn.QueryRowContext(ctx, `SELECT count(*) FROM traces WHERE trace_id = ?`, id).Scan(&n); err != nil {
		return false, false
	}
	return n == 1, true
}

// rollback, deferred, undoes whatever was not committed, even when ctx is
// cancelled, and joins its own failure to *err.
func (tx *traceTx) rollback(ctx context.Context, err *error) {
	if tx.ended {
		return
	}
	if _, rerr := tx.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
		*err = errors.Join(*err, &dbError{fmt.Errorf("rollback: %w", rerr)})
		return
	}
	tx.wasUndone()
}

// wasUndone calls undone, once.
func (tx *traceTx) wasUndone() {
	if f := tx.undone; f != nil {
		tx.undone = nil
		f()
	}
}

// storeNames stores the names the trace uses before it commits: inside its
// transaction when l is the ingest's sole loader (interner.flushInto), else
// in a transaction of their own.
func (l *loader) storeNames(ctx context.Context, tx *traceTx) error {
	if !l.sole {
		return l.names.flush(ctx, l.db)
	}
	requeue, err := l.names.flushInto(ctx, tx.conn)
	if err != nil {
		return err
	}
	tx.undone = requeue
	return nil
}

// endFailedBegin rolls back what a failed BEGIN may have left: interrupted
// after it ran, DuckDB keeps the transaction open (aborted), and the
// connection, back in the pool, would fail the next BEGIN on it ("cannot
// start a transaction within a transaction"). With none open, ROLLBACK
// fails harmlessly.
func endFailedBegin(ctx context.Context, conn *sql.Conn) {
	_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
}
