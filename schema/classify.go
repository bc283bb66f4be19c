package schema

import (
	"context"
	"database/sql"
	_ "embed" // classify.sql
	"fmt"
	"strings"

	"github.com/tracehouse/tracehouse/inline"
	"github.com/tracehouse/tracehouse/kernelname"
)

// classifySQL sets family and category on kernel_names; see its header.
//
//go:embed classify.sql
var classifySQL string

// Execer is what Classify and ClassifierVersion need from a database handle.
// *sql.DB, *sql.Conn and *sql.Tx all satisfy it, so ingest can classify the
// names it just inserted inside its own transaction.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Classify sets family and category, from the warehouse's classifier rules,
// on the kernel_names rows that have none yet, or on every row when all is
// true (`tracehouse reclassify`). It returns how many rows changed.
//
// The work is one UPDATE statement, so it is atomic on any handle. It costs
// one regular-expression compilation per (name, rule) pair whose keyword the
// name contains, a few per name: thousands of names take well under a second.
func Classify(ctx context.Context, db Execer, all bool) (int64, error) {
	// Written in, so the statement is planned once (inline.Args).
	q, args := inline.Args(classifySQL, []any{sql.Named("all", all)})
	res, err := db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("classify kernel names: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("classify kernel names: rows changed: %w", err)
	}
	return n, nil
}

// ClassifierInfo describes the classifier rules a warehouse holds.
type ClassifierInfo struct {
	// Version is the highest classifier_versions.version.
	Version int
	// Migration is the migration that installed that version (NNNN_name).
	Migration string
	// Rules is the number of rows in classifier_rules.
	Rules int
}

// ClassifierVersion reports the warehouse's classifier version and rule count,
// for `tracehouse reclassify` to print.
func ClassifierVersion(ctx context.Context, db Execer) (ClassifierInfo, error) {
	var ci ClassifierInfo
	err := db.QueryRowContext(ctx, `
		SELECT v.version, v.migration, (SELECT count(*) FROM classifier_rules)
		FROM classifier_versions AS v
		ORDER BY v.version DESC
		LIMIT 1`).Scan(&ci.Version, &ci.Migration, &ci.Rules)
	if err != nil {
		return ClassifierInfo{}, fmt.Errorf("read classifier version: %w", err)
	}
	return ci, nil
}

// Querier is what FillDisplayNames needs from a database handle (*sql.DB,
// *sql.Conn and *sql.Tx satisfy it).
type Querier interface {
	Execer
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// FillDisplayNames sets kernel_names.display_name (kernelname.Display of
// the short name) on the rows that have none, or on every row when all is
// true (`tracehouse reclassify`), and returns how many rows changed. Ingest
// stores the display name with each new name; this fills the rows of a
// warehouse made before migration 0019.
func FillDisplayNames(ctx context.Context, db Querier, all bool) (int64, error) {
	q := `SELECT name_id, short_name, display_name FROM kernel_names WHERE display_name IS NULL`
	if all {
		q = `SELECT name_id, short_name, display_name FROM kernel_names`
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("read kernel names without a display name: %w", err)
	}
	type change struct {
		id      int64
		display string
	}
	var todo []change
	for rows.Next() {
		var id int64
		var short string
		var have sql.NullString
		if err := rows.Scan(&id, &short, &have); err != nil {
			rows.Close()
			return 0, fmt.Errorf("read kernel names without a display name: %w", err)
		}
		if d := kernelname.Display(short); !have.Valid || have.String != d {
			todo = append(todo, change{id, d})
		}
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read kernel names without a display name: %w", err)
	}
	changed := int64(len(todo))
	const batch = 500
	for len(todo) > 0 {
		n := min(batch, len(todo))
		var b strings.Builder
		args := make([]any, 0, 2*n)
		b.WriteString(`UPDATE kernel_names AS k SET display_name = v.display FROM (VALUES `)
		for i, c := range todo[:n] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?::INTEGER, ?::VARCHAR)")
			args = append(args, c.id, c.display)
		}
		b.WriteString(`) AS v(name_id, display) WHERE k.name_id = v.name_id`)
		if _, err := db.ExecContext(ctx, b.String(), args...); err != nil {
			return 0, fmt.Errorf("store display names: %w", err)
		}
		todo = todo[n:]
	}
	return changed, nil
}
