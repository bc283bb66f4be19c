package queries

import (
	"database/sql"
	"fmt"
	"testing"
)

// describe lists the columns of a table expression as "name type" lines.
func describe(t *testing.T, db *sql.DB, from string) string {
	t.Helper()
	rows, err := db.Query(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ` + from + `)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out string
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		out += name + " " + typ + "\n"
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// A *_none twin stands in for its macro in a single-trace query
// (singleTrace): it must have the macro's columns, in order and of the same
// types, so that the query binds the same way, and no row.
func TestNoneTwinsMatchTheirMacros(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, c := range []struct{ macro, none, args string }{
		{"name_scope", "_name_scope_none", "(1, 2)"},
		{"_fusion_kernels", "_fusion_kernels_none", "(1, 2, NULL)"},
	} {
		want := describe(t, f.db, c.macro+c.args)
		if want == "" {
			t.Fatalf("%s has no columns", c.macro)
		}
		if got := describe(t, f.db, c.none+c.args); got != want {
			t.Errorf("%s's columns:\n%s\nwant %s's:\n%s", c.none, got, c.macro, want)
		}
		var n int
		if err := f.db.QueryRow(`SELECT count(*) FROM ` + c.none + c.args).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s has %d rows, want none", c.none, n)
		}
	}
	// The twins apply in single-trace mode only.
	if got := fmt.Sprint(singleTrace(sql.NullInt64{Int64: 2, Valid: true}, "name_scope", "_name_scope_none")); got != "[]" {
		t.Errorf("singleTrace in two-trace mode = %s, want none", got)
	}
}
