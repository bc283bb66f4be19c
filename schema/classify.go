package schema

import (
	"context"
	"database/sql"
	_ "embed" // classify.sql
	"fmt"

	"github.com/tracehouse/tracehouse/inline"
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
