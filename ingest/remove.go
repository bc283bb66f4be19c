package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// RunNotFoundError names a run label the warehouse does not hold.
type RunNotFoundError struct{ Label string }

func (e *RunNotFoundError) Error() string { return fmt.Sprintf("no run labelled %q", e.Label) }

// Removed is what RemoveRuns deleted for one run.
type Removed struct {
	Label  string
	Traces int64
}

// RemoveRuns deletes the runs with the given labels and every row they own,
// in one transaction: all of them go, or (on any error, or a label that
// names no run) none. Rows are found through the catalog: every table with
// a run_id column loses the run's rows, every other table with a trace_id
// column the rows of its traces, so a table a later migration adds is
// covered without changing this code. Interned names (kernel_names, sites)
// stay: other runs may share them.
func RemoveRuns(ctx context.Context, db *sql.DB, labels []string) (_ []Removed, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("remove runs: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	byRun, byTrace, err := ownedTables(ctx, tx)
	if err != nil {
		return nil, err
	}
	var out []Removed
	for _, label := range labels {
		var id, traces int64
		err := tx.QueryRowContext(ctx, `SELECT r.run_id, count(t.trace_id) FROM runs r
			LEFT JOIN traces t USING (run_id) WHERE r.label = ? GROUP BY r.run_id`, label).Scan(&id, &traces)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, &RunNotFoundError{label}
		}
		if err != nil {
			return nil, fmt.Errorf("remove run %q: %w", label, err)
		}
		// Trace-keyed rows first (they find their traces through `traces`),
		// then run-keyed ones, `traces` and `runs` last.
		for _, table := range byTrace {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+
				` WHERE trace_id IN (SELECT trace_id FROM traces WHERE run_id = ?)`, id); err != nil {
				return nil, fmt.Errorf("remove run %q from %s: %w", label, table, err)
			}
		}
		for _, table := range append(byRun, "traces", "runs") {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE run_id = ?`, id); err != nil {
				return nil, fmt.Errorf("remove run %q from %s: %w", label, table, err)
			}
		}
		out = append(out, Removed{Label: label, Traces: traces})
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("remove runs: commit: %w", err)
	}
	return out, nil
}

// ownedTables lists the warehouse tables (other than runs and traces)
// holding rows of a run, by the column that says whose they are; names come
// quoted from the catalog, never from user input.
func ownedTables(ctx context.Context, tx *sql.Tx) (byRun, byTrace []string, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT table_name, bool_or(column_name = 'run_id')
		FROM duckdb_columns()
		WHERE schema_name = 'main' AND NOT internal AND column_name IN ('run_id', 'trace_id')
		  AND table_name NOT IN ('runs', 'traces')
		  AND table_name IN (SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND NOT temporary)
		GROUP BY table_name ORDER BY table_name`)
	if err != nil {
		return nil, nil, fmt.Errorf("remove runs: list tables: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var hasRun bool
		if err := rows.Scan(&name, &hasRun); err != nil {
			return nil, nil, fmt.Errorf("remove runs: list tables: %w", err)
		}
		quoted := `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
		if hasRun {
			byRun = append(byRun, quoted)
		} else {
			byTrace = append(byTrace, quoted)
		}
	}
	return byRun, byTrace, rows.Err()
}

// RenameRun gives run old the label new; new must not name another run.
func RenameRun(ctx context.Context, db *sql.DB, old, new string) error {
	if err := CheckLabel(new); err != nil {
		return fmt.Errorf("rename run %q: %w", old, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("rename run: %w", err)
	}
	defer tx.Rollback()
	var taken int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE label = ?`, new).Scan(&taken); err != nil {
		return fmt.Errorf("rename run %q: %w", old, err)
	}
	if taken > 0 {
		return fmt.Errorf("rename run %q: a run labelled %q already exists", old, new)
	}
	res, err := tx.ExecContext(ctx, `UPDATE runs SET label = ? WHERE label = ?`, new, old)
	if err != nil {
		return fmt.Errorf("rename run %q: %w", old, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return &RunNotFoundError{old}
	}
	return tx.Commit()
}
