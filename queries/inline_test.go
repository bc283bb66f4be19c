package queries

// The literals inline.Args writes for every statement of this package (and
// of ingest and schema) read back in DuckDB as the values the driver binds.
// The checks live here, with the statements, so the inline package's own
// tests need no database.

import (
	"context"
	"database/sql"
	"math"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/inline"
)

// TestInlineSameAsBound: DuckDB reads every literal back as the value the driver
// binds, for values made to break out of a literal or a comment.
func TestInlineSameAsBound(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("duckdb", "?threads=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	values := []any{
		nil, true, false, 0, -1, int64(math.MaxInt64), int64(math.MinInt64), int32(-7), uint64(42),
		0.1, -2.5e-300, 1e300, "", "plain", "it's", "''", "a\n-- b", "x'; DROP TABLE t; --", "/* c */ $v", "héllo ✓",
	}
	const query = "-- $v is the value\nSELECT CAST($v AS VARCHAR) /* $v */, '$v'"
	for _, v := range values {
		var bound, inlined sql.NullString
		var lit1, lit2 string
		if err := db.QueryRowContext(ctx, query, sql.Named("v", v)).Scan(&bound, &lit1); err != nil {
			t.Fatalf("%#v bound: %v", v, err)
		}
		q, rest := inline.Args(query, []any{sql.Named("v", v)})
		if len(rest) != 0 {
			t.Errorf("%#v was not written in", v)
			continue
		}
		if err := db.QueryRowContext(ctx, q).Scan(&inlined, &lit2); err != nil {
			t.Fatalf("%#v inlined as %q: %v", v, q, err)
		}
		if bound != inlined || lit1 != "$v" || lit2 != "$v" {
			t.Errorf("%#v: bound %v, inlined %v (%q), literals %q %q", v, bound, inlined, q, lit1, lit2)
		}
	}
}

// TestInlineListsSameAsBound: a list literal is the list, of the type, the
// driver binds (the driver binds a list only where a function takes it,
// and an empty one not at all).
func TestInlineListsSameAsBound(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("duckdb", "?threads=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const query = "SELECT CAST(list_transform($v, x -> x) AS VARCHAR), typeof(list_transform($v, x -> x)), len($v)"
	for _, v := range []any{
		[]string{"", "it's", "a\n-- b", "x']; --", "héllo ✓"}, []string{"one"},
		[]int64{math.MinInt64, 0, 7}, []int64{-1},
	} {
		var b1, b2, i1, i2 string
		var bn, in int
		if err := db.QueryRow(query, sql.Named("v", v)).Scan(&b1, &b2, &bn); err != nil {
			t.Fatalf("%#v bound: %v", v, err)
		}
		q, rest := inline.Args(query, []any{sql.Named("v", v)})
		if len(rest) != 0 {
			t.Fatalf("%#v was not written in", v)
		}
		if err := db.QueryRow(q).Scan(&i1, &i2, &in); err != nil {
			t.Fatalf("%#v inlined as %q: %v", v, q, err)
		}
		if b1 != i1 || b2 != i2 || bn != in {
			t.Errorf("%#v: bound %s %s %d, inlined %s %s %d (%q)", v, b1, b2, bn, i1, i2, in, q)
		}
	}
}

// TestCollectSavedNamesItsTwin: a twin whose *_cached macro the query does
// not call is an error, not a query silently run as written.
func TestCollectSavedNamesItsTwin(t *testing.T) {
	t.Parallel()
	_, err := collectSaved(context.Background(), nil, "idle_by_stage", []savedTwin{{"_no_such_cached", "_no_such_saved"}}, nil,
		func(*sql.Rows) (int, error) { return 0, nil })
	if err == nil || !strings.Contains(err.Error(), "_no_such_cached") {
		t.Errorf("want an error naming the macro, got %v", err)
	}
}
