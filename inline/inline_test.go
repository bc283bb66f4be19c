package inline

import (
	"database/sql"
	"math"
	"testing"
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
