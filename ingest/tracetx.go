package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tracehouse/tracehouse/schema"
)

// traceTx is the one transaction a trace file is loaded in (JSON and nsys
// alike): everything the file adds, and the removal of the trace it
// replaces, commits together or not at all.
type traceTx struct {
	conn      *sql.Conn
	committed bool
}

// beginTrace begins the file's transaction on conn and, when replace is a
// trace id, deletes that trace's rows inside it.
func beginTrace(ctx context.Context, conn *sql.Conn, replace int64) (*traceTx, error) {
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
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

// commit commits the file's rows; path names the file in the error.
func (tx *traceTx) commit(ctx context.Context, path string) error {
	if _, err := tx.conn.ExecContext(ctx, "COMMIT"); err != nil {
		return &dbError{fmt.Errorf("%s: commit: %w", path, err)}
	}
	tx.committed = true
	return nil
}

// rollback, deferred, undoes whatever was not committed, even when ctx is
// cancelled, and joins its own failure to *err.
func (tx *traceTx) rollback(ctx context.Context, err *error) {
	if tx.committed {
		return
	}
	if _, rerr := tx.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
		*err = errors.Join(*err, &dbError{fmt.Errorf("rollback: %w", rerr)})
	}
}
