// Package queries holds every SQL query a report shows, one query per .sql
// file (embedded), each with a thin typed Go wrapper named after it.
//
// Each .sql file starts with a comment header: the query's name, what one
// row means, and its named parameters ($run, $stage, ...), bound with
// sql.Named. Wrappers take a Querier so they run on a *sql.DB, a *sql.Conn
// or inside a *sql.Tx.
package queries

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"strings"

	"github.com/tracehouse/tracehouse/inline"
)

//go:embed *.sql
var files embed.FS

// Querier is what a wrapper needs from a database handle.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Text returns the SQL of the named query file (without .sql): for the
// query tests and bench/triage's EXPLAIN; no package runs it.
func Text(name string) (string, error) {
	b, err := files.ReadFile(name + ".sql")
	if err != nil {
		return "", fmt.Errorf("query %s: %w", name, err)
	}
	return string(b), nil
}

// Names lists every embedded query, for the meta-test that prepares them all.
func Names() []string {
	entries, _ := files.ReadDir(".")
	var out []string
	for _, e := range entries {
		n := e.Name()
		if len(n) > 4 && n[len(n)-4:] == ".sql" {
			out = append(out, n[:len(n)-4])
		}
	}
	return out
}

// collect runs a query and scans every row with scan.
func collect[T any](ctx context.Context, q Querier, name string, args []any, scan func(*sql.Rows) (T, error)) ([]T, error) {
	return collectSaved(ctx, q, name, nil, args, scan)
}

// savedTwin is a *_cached macro of the SQL library and its *_saved twin:
// the saved branch alone, taking the same arguments. (Or a macro that a
// two-trace branch reads and its *_none twin, which has no row: see
// singleTrace.)
type savedTwin struct{ cached, saved string }

// singleTrace is the twin a query reads in place of a macro its two-trace
// branch alone calls (under "$mapping IS NOT NULL") when mapping is
// invalid (single-trace mode): that branch has no row then, and DuckDB
// would bind the macro all the same. Nil in two-trace mode.
func singleTrace(mapping sql.NullInt64, macro, none string) []savedTwin {
	if mapping.Valid {
		return nil
	}
	return []savedTwin{{macro, none}}
}

// isFreshGiven is isFresh for a query whose freshness check (macro, an
// *_current of the SQL library) takes the run's overlap fingerprint fp,
// passed as $overlap_fp: when fp is valid the query names the check's
// *_current_given form, which takes it as given where the macro would
// bind the branch computing it (see _overlap_fp), 0.5 ms of each check.
func isFreshGiven(ctx context.Context, q Querier, name, macro string, fp sql.NullString, args []any) (bool, error) {
	var twins []savedTwin
	if fp.Valid {
		twins = []savedTwin{{macro, macro + "_given"}}
	}
	return freshVia(ctx, q, name, twins, append(args, sql.Named("overlap_fp", fp)))
}

// collectSaved runs a query as collect does, each call of a twin's
// *_cached macro in its text replaced by the *_saved one: for a caller
// that has checked the saved copy is current, so that DuckDB does not
// bind the computing branch it would skip (binding a macro's body is most
// of what such a query costs). A twin the text does not call is an error.
func collectSaved[T any](ctx context.Context, q Querier, name string, twins []savedTwin, args []any, scan func(*sql.Rows) (T, error)) ([]T, error) {
	text, err := Text(name)
	if err != nil {
		return nil, err
	}
	for _, t := range twins {
		if !strings.Contains(text, t.cached+"(") {
			return nil, fmt.Errorf("query %s: no call of %s to read the saved copy through %s", name, t.cached, t.saved)
		}
		text = strings.ReplaceAll(text, t.cached+"(", t.saved+"(")
	}
	text, args = inline.Args(text, args)
	rows, err := q.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", name, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("query %s: scan: %w", name, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query %s: %w", name, err)
	}
	return out, nil
}

// isFresh runs one of the *_fresh queries, whose one row says whether a
// saved copy is current; no row counts as not.
func isFresh(ctx context.Context, q Querier, name string, args []any) (bool, error) {
	return freshVia(ctx, q, name, nil, args)
}

// freshVia is isFresh reading the query through twins (collectSaved).
func freshVia(ctx context.Context, q Querier, name string, twins []savedTwin, args []any) (bool, error) {
	fresh, err := collectSaved(ctx, q, name, twins, args, scanBool)
	return len(fresh) == 1 && fresh[0], err
}

// scanBool scans a row of one BOOLEAN column.
func scanBool(rows *sql.Rows) (bool, error) {
	var b bool
	err := rows.Scan(&b)
	return b, err
}
