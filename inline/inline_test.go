package inline

import (
	"context"
	"database/sql"
	"math"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

func TestArgs(t *testing.T) {
	t.Parallel()
	named := func(kv ...any) []any {
		var out []any
		for i := 0; i < len(kv); i += 2 {
			out = append(out, sql.Named(kv[i].(string), kv[i+1]))
		}
		return out
	}
	for _, c := range []struct {
		name, query string
		args        []any
		want        string // "" = unchanged, arguments kept
	}{
		{"ints and NULL", "SELECT $run, $rank, $stage", named("run", int64(7), "rank", 0, "stage", nil), "SELECT 7, 0, NULL"},
		{"negative after minus", "SELECT 1-$a", named("a", -5), "SELECT 1-(-5)"},
		{"longer name first", "SELECT $run_id + $run", named("run", 1, "run_id", 2), "SELECT 2 + 1"},
		{"float", "SELECT $f", named("f", 0.5), "SELECT CAST('0.5' AS DOUBLE)"},
		{"bool", "SELECT $b", named("b", true), "SELECT true"},
		{"quote doubled", "SELECT $s", named("s", "it's"), "SELECT 'it''s'"},
		{"comments and literals left alone", "-- $a\nSELECT $a, '$a', \"$a\" /* $a */", named("a", 1),
			"-- $a\nSELECT 1, '$a', \"$a\" /* $a */"},
		{"doubled quote inside a literal", "SELECT 'x''$a', $a", named("a", 1), "SELECT 'x''$a', 1"},
		{"cast after", "SELECT $run::INTEGER", named("run", 3), "SELECT 3::INTEGER"},
		{"valuer", "SELECT $n", named("n", sql.NullInt64{Int64: 4, Valid: true}), "SELECT 4"},
		{"null valuer", "SELECT $n", named("n", sql.NullString{}), "SELECT NULL"},
		{"positional", "SELECT ?", []any{1}, ""},
		{"list", "SELECT $l", named("l", []int64{1, -2}), "SELECT [1, (-2)]::BIGINT[]"},
		{"string list", "SELECT $l", named("l", []string{"a", "it's"}), "SELECT ['a', 'it''s']::VARCHAR[]"},
		{"empty list", "SELECT $l", named("l", []string{}), "SELECT []::VARCHAR[]"},
		{"nil list", "SELECT $l", named("l", []string(nil)), ""},
		{"list of a string without a literal", "SELECT $l", named("l", []string{"a\x00b"}), ""},
		{"other list", "SELECT $l", named("l", []int32{1}), ""},
		{"unused argument", "SELECT 1", named("a", 1), ""},
		{"placeholder without argument", "SELECT $a, $b", named("a", 1), ""},
		{"NaN", "SELECT $f", named("f", math.NaN()), ""},
		{"float32", "SELECT $f", named("f", float32(0.5)), ""},
		{"NUL byte", "SELECT $s", named("s", "a\x00b"), ""},
		{"invalid UTF-8", "SELECT $s", named("s", "a\xffb"), ""},
	} {
		got, rest := Args(c.query, c.args)
		want, wantRest := c.want, 0
		if want == "" {
			want, wantRest = c.query, len(c.args)
		}
		if got != want || len(rest) != wantRest {
			t.Errorf("%s: Args = %q with %d args; want %q with %d", c.name, got, len(rest), want, wantRest)
		}
	}
}

// TestSameAsBound: DuckDB reads every literal back as the value the driver
// binds, for values made to break out of a literal or a comment.
func TestSameAsBound(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("duckdb", "")
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
		q, rest := Args(query, []any{sql.Named("v", v)})
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

// TestListsSameAsBound: a list literal is the list, of the type, the
// driver binds (the driver binds a list only where a function takes it,
// and an empty one not at all).
func TestListsSameAsBound(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("duckdb", "")
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
		q, rest := Args(query, []any{sql.Named("v", v)})
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
