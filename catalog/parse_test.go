package catalog

import (
	"errors"
	"strings"
	"testing"
)

// base is a small valid catalog that uses every field. Cases edit one line in
// place (never adding or removing lines), so the line numbers in the
// expected messages can be read straight off this listing.
const base = `version: 1
fusions:
  - id: a-one
    name: A one
    framework: sglang
    origin: mainline
    fused: [x_fused]
    chain:
      - [step_a]
      - [step_b]
    ordered: true
    max_gap_us: 50
    max_between: 2
    models_any: [llama]
    models_none: [llama-guard]
    min_tp: 1
    min_share: 0.1
    likely_share: 1.0
    priority: 0
    subsumes: [b-two]
    sources: [path/a.py]
    switch: --enable-a
    rationale: Saves a launch.
  - id: b-two
    name: B two
    framework: vllm
    origin: inflight
    fused: [y_fused]
    priority: 5
    min_share: 0.2
    likely_share: 1.5
    sources: ['PR #123', path/b.py]
    rationale: Saves a round trip.
overlaps:
  - id: o-one
    name: O one
    framework: flashinfer
    origin: upstream
    keywords: [aux_stream]
    sources: [path/o.py]
    switch: O_ENABLE=1
    rationale: Hides a copy.
`

// edit replaces the whole line old with repl; it fails the test when old is
// not exactly one line of base.
func edit(t *testing.T, old, repl string) string {
	t.Helper()
	lines := strings.Split(base, "\n")
	hits := 0
	for i, l := range lines {
		if l == old {
			lines[i] = repl
			hits++
		}
	}
	if hits != 1 {
		t.Fatalf("line %q occurs %d times in base", old, hits)
	}
	return strings.Join(lines, "\n")
}

func TestParseBase(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(base), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := c.Fusions[0]
	if f.MaxGapUS != 50 || f.MaxBetween != 2 || !f.Ordered || f.Switch != "--enable-a" || len(f.Chain) != 2 {
		t.Errorf("fusion decoded as %+v", f)
	}
	if f.Line() != 3 || c.Overlaps[0].Line() != 35 {
		t.Errorf("entry lines %d, %d; want 3, 35", f.Line(), c.Overlaps[0].Line())
	}
}

func TestParseDefaults(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(`version: 1
fusions:
  - id: a
    name: A
    framework: sglang
    origin: mainline
    fused: [x]
    min_share: 0
    likely_share: 0
    sources: [a.py]
    rationale: r.
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := c.Fusions[0]
	if !f.Ordered || f.MaxGapUS != 50 || f.MaxBetween != 2 || f.MinTP != 1 || f.Priority != 0 || f.Chain != nil || f.Switch != "" {
		t.Errorf("defaults not applied: %+v", f)
	}
	if len(c.Overlaps) != 0 {
		t.Errorf("overlaps = %v; want none", c.Overlaps)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	type tc struct {
		name string
		doc  string
		kind error
		want string
	}
	cases := []tc{
		{"syntax", edit(t, "    name: A one", "    name: [A one"), ErrSyntax,
			"t.yaml:4: did not find expected ',' or ']'"},
		{"empty file", "", ErrMissing,
			"t.yaml:1: empty file: want a mapping with version, fusions and overlaps"},
		{"not a mapping", "- a\n- b\n", ErrType,
			"t.yaml:1: want a mapping with version, fusions and overlaps, got a list"},
		{"two documents", base + "---\nversion: 1\n", ErrSyntax,
			"t.yaml:43: a second YAML document; a catalog is one document"},
		{"unsupported version", edit(t, "version: 1", "version: 2"), ErrValue,
			"t.yaml:1: version: unsupported catalog version 2 (this tracehouse reads version 1)"},
		{"version not a number", edit(t, "version: 1", "version: one"), ErrType,
			`t.yaml:1: version: want a whole number, got "one"`},
		{"missing version", edit(t, "version: 1", "# no version"), ErrMissing,
			"t.yaml:2: version: required field is missing"},
		{"unknown top-level field", edit(t, "version: 1", "verison: 1"), ErrUnknownField,
			"t.yaml:1: verison: unknown field (did you mean version?)"},
		{"fusions not a list", "version: 1\nfusions: {}\n", ErrType,
			"t.yaml:2: fusions: want a list, got a mapping"},
		{"entry not a mapping", "version: 1\nfusions:\n  - b-two\n", ErrType,
			"t.yaml:3: fusions[0]: want a mapping, got \"b-two\""},

		{"unknown field", edit(t, "    max_gap_us: 50", "    max_gap: 50"), ErrUnknownField,
			"t.yaml:12: fusions[0] (a-one): max_gap: unknown field (did you mean max_gap_us?)"},
		{"unknown field, no suggestion", edit(t, "    max_gap_us: 50", "    colour: red"), ErrUnknownField,
			"t.yaml:12: fusions[0] (a-one): colour: unknown field"},
		{"field given twice", edit(t, "    max_gap_us: 50", "    name: Again"), ErrDuplicate,
			"t.yaml:12: fusions[0] (a-one): name: field given twice (first on line 4)"},
		{"missing required field", edit(t, "    rationale: Saves a launch.", "    # rationale removed"), ErrMissing,
			"t.yaml:3: fusions[0] (a-one): rationale: required field is missing"},
		{"missing overlap keywords", edit(t, "    keywords: [aux_stream]", "    # keywords removed"), ErrMissing,
			"t.yaml:35: overlaps[0] (o-one): keywords: required field is missing"},

		{"number is text", edit(t, "    max_gap_us: 50", "    max_gap_us: abc"), ErrType,
			`t.yaml:12: fusions[0] (a-one): max_gap_us: want a number, got "abc"`},
		{"number is a list", edit(t, "    min_share: 0.1", "    min_share: [0.1]"), ErrType,
			"t.yaml:17: fusions[0] (a-one): min_share: want a number, got a list"},
		{"number is not finite", edit(t, "    max_gap_us: 50", "    max_gap_us: .inf"), ErrType,
			"t.yaml:12: fusions[0] (a-one): max_gap_us: want a finite number, got .inf"},
		{"whole number is fractional", edit(t, "    max_between: 2", "    max_between: 1.5"), ErrType,
			"t.yaml:13: fusions[0] (a-one): max_between: want a whole number, got 1.5"},
		{"bool is yes", edit(t, "    ordered: true", "    ordered: yes"), ErrType,
			`t.yaml:11: fusions[0] (a-one): ordered: want true or false, got "yes"`},
		{"string is a number", edit(t, "    name: A one", "    name: 42"), ErrType,
			"t.yaml:4: fusions[0] (a-one): name: want a string, got 42"},
		{"string is null", edit(t, "    switch: --enable-a", "    switch: ~"), ErrType,
			"t.yaml:22: fusions[0] (a-one): switch: want a string, got nothing (null)"},
		{"list is a string", edit(t, "    fused: [x_fused]", "    fused: x_fused"), ErrType,
			`t.yaml:7: fusions[0] (a-one): fused: want a list, got "x_fused"`},
		{"list item not a string", edit(t, "    sources: [path/a.py]", "    sources: [path/a.py, {a: b}]"), ErrType,
			"t.yaml:21: fusions[0] (a-one): sources[1]: want a string, got a mapping"},
		{"chain step not a list", edit(t, "      - [step_b]", "      - step_b"), ErrType,
			`t.yaml:10: fusions[0] (a-one): chain[1]: want a list of alternative keywords, got "step_b"`},

		{"bad id", edit(t, "  - id: a-one", "  - id: A_one"), ErrValue,
			`t.yaml:3: fusions[0] ("A_one"): id: want lower-case letters, digits and single dashes, got "A_one"`},
		// Renaming b-two also orphans a-one's subsumes: both are reported, in file order.
		{"duplicate id", edit(t, "  - id: b-two", "  - id: a-one"), ErrDuplicate,
			`t.yaml:20: fusions[0] (a-one): subsumes[0]: unknown fusion id "b-two"
t.yaml:24: fusions[1] (a-one): id: id "a-one" is already used (first at line 3)`},
		{"duplicate id across lists", edit(t, "  - id: o-one", "  - id: b-two"), ErrDuplicate,
			`t.yaml:35: overlaps[0] (b-two): id: id "b-two" is already used (first at line 24)`},
		{"bad framework", edit(t, "    framework: sglang", "    framework: sgl"), ErrValue,
			`t.yaml:5: fusions[0] (a-one): framework: want one of sglang, vllm, trtllm, tokenspeed, flashinfer; got "sgl"`},
		{"bad origin", edit(t, "    origin: upstream", "    origin: merged"), ErrValue,
			`t.yaml:38: overlaps[0] (o-one): origin: want one of mainline, upstream, inflight; got "merged"`},
		{"inflight without PR", edit(t, "    sources: ['PR #123', path/b.py]", "    sources: [path/b.py]"), ErrMissing,
			`t.yaml:32: fusions[1] (b-two): sources: origin inflight must cite its pull request, e.g. "PR #12345"`},
		{"overlap inflight without PR", edit(t, "    origin: upstream", "    origin: inflight"), ErrMissing,
			`t.yaml:40: overlaps[0] (o-one): sources: origin inflight must cite its pull request, e.g. "PR #12345"`},
		{"subsumes unknown id", edit(t, "    subsumes: [b-two]", "    subsumes: [b-three]"), ErrReference,
			`t.yaml:20: fusions[0] (a-one): subsumes[0]: unknown fusion id "b-three"`},
		{"subsumes an overlap", edit(t, "    subsumes: [b-two]", "    subsumes: [o-one]"), ErrReference,
			`t.yaml:20: fusions[0] (a-one): subsumes[0]: "o-one" is an overlap entry; subsumes names fusion ids`},
		{"subsumes itself", edit(t, "    subsumes: [b-two]", "    subsumes: [a-one]"), ErrReference,
			"t.yaml:20: fusions[0] (a-one): subsumes[0]: an entry cannot subsume itself"},
		{"subsumes loop", edit(t, "    priority: 5", "    subsumes: [a-one]"), ErrReference,
			"t.yaml:29: fusions[1] (b-two): subsumes[0]: subsumes loop a-one -> b-two -> a-one"},
		{"min above likely", edit(t, "    min_share: 0.1", "    min_share: 2"), ErrValue,
			"t.yaml:17: fusions[0] (a-one): min_share: min_share 2 is above likely_share 1"},
		{"share out of range", edit(t, "    likely_share: 1.0", "    likely_share: 150"), ErrValue,
			"t.yaml:18: fusions[0] (a-one): likely_share: want a percentage between 0 and 100, got 150"},
		{"negative gap", edit(t, "    max_gap_us: 50", "    max_gap_us: -1"), ErrValue,
			"t.yaml:12: fusions[0] (a-one): max_gap_us: want a finite number >= 0, got -1"},
		{"negative between", edit(t, "    max_between: 2", "    max_between: -1"), ErrValue,
			"t.yaml:13: fusions[0] (a-one): max_between: want a number >= 0, got -1"},
		{"min_tp zero", edit(t, "    min_tp: 1", "    min_tp: 0"), ErrValue,
			"t.yaml:16: fusions[0] (a-one): min_tp: want a TP size >= 1, got 0"},
		{"model in both lists", edit(t, "    models_none: [llama-guard]", "    models_none: [llama-guard, llama]"), ErrValue,
			`t.yaml:15: fusions[0] (a-one): models_none[1]: "llama" is also in models_any, so the entry could never apply`},

		{"empty fused list", edit(t, "    fused: [x_fused]", "    fused: []"), ErrMissing,
			"t.yaml:7: fusions[0] (a-one): fused: must list at least one keyword"},
		{"empty keyword", edit(t, "    fused: [x_fused]", `    fused: [x_fused, ""]`), ErrValue,
			"t.yaml:7: fusions[0] (a-one): fused[1]: empty keyword"},
		{"blank chain keyword", edit(t, "      - [step_b]", `      - [step_b, "  "]`), ErrValue,
			"t.yaml:10: fusions[0] (a-one): chain[1][1]: empty keyword"},
		{"keyword without letters", edit(t, "    keywords: [aux_stream]", `    keywords: [aux_stream, "--"]`), ErrValue,
			`t.yaml:39: overlaps[0] (o-one): keywords[1]: keyword "--" has no letters or digits`},
		{"keyword with spaces", edit(t, "      - [step_a]", `      - [" step_a"]`), ErrValue,
			`t.yaml:9: fusions[0] (a-one): chain[0][0]: keyword " step_a" has leading or trailing spaces`},
		{"empty chain step", edit(t, "      - [step_b]", "      - []"), ErrValue,
			"t.yaml:10: fusions[0] (a-one): chain[1]: empty step: want at least one keyword"},
		{"empty source", edit(t, "    sources: [path/a.py]", `    sources: [path/a.py, ""]`), ErrValue,
			"t.yaml:21: fusions[0] (a-one): sources[1]: empty source"},
		{"empty switch", edit(t, "    switch: O_ENABLE=1", `    switch: ""`), ErrValue,
			"t.yaml:41: overlaps[0] (o-one): switch: empty switch: leave the field out when it is not known"},
		{"empty name", edit(t, "    name: O one", `    name: ""`), ErrMissing,
			"t.yaml:36: overlaps[0] (o-one): name: must not be empty"},
		{"multi-line rationale", edit(t, "    rationale: Hides a copy.", `    rationale: "Hides\na copy."`), ErrValue,
			"t.yaml:42: overlaps[0] (o-one): rationale: must be one line (use >- to fold a long sentence)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat, err := Parse([]byte(c.doc), "t.yaml")
			if err == nil {
				t.Fatalf("parsed without error: %+v", cat)
			}
			if got := err.Error(); got != c.want {
				t.Errorf("error\n got: %s\nwant: %s", got, c.want)
			}
			if strings.Count(err.Error(), "\n") != strings.Count(c.want, "\n") {
				t.Errorf("want one line per problem")
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			if !errors.Is(err, ErrInvalid) || !errors.Is(err, c.kind) {
				t.Errorf("errors.Is(ErrInvalid)=%v, errors.Is(%v)=%v", errors.Is(err, ErrInvalid), c.kind, errors.Is(err, c.kind))
			}
		})
	}
}

// Several problems are all reported, one line each, in file order.
func TestParseReportsEveryProblem(t *testing.T) {
	t.Parallel()
	doc := edit(t, "    max_gap_us: 50", "    max_gap_us: abc")
	doc = strings.Replace(doc, "    framework: flashinfer", "    framework: [x]", 1)
	_, err := Parse([]byte(doc), "t.yaml")
	want := `t.yaml:12: fusions[0] (a-one): max_gap_us: want a number, got "abc"
t.yaml:37: overlaps[0] (o-one): framework: want a string, got a list`
	if err == nil || err.Error() != want {
		t.Fatalf("got:\n%v\nwant:\n%s", err, want)
	}
}

// Anchors and aliases are plain YAML; sharing a keyword list must work.
func TestParseAliases(t *testing.T) {
	t.Parallel()
	doc := edit(t, "    fused: [x_fused]", "    fused: &kw [x_fused, x2]")
	doc = strings.Replace(doc, "    fused: [y_fused]", "    fused: *kw", 1)
	c, err := Parse([]byte(doc), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Fusions[1].Fused; len(got) != 2 || got[1] != "x2" {
		t.Errorf("aliased list = %q", got)
	}
}

// Validate also checks catalogs built in code, which have no positions.
func TestValidateBuiltInCode(t *testing.T) {
	t.Parallel()
	c := &Catalog{Version: 1, Fusions: []Fusion{{
		ID: "x", Name: "X", Framework: "sglang", Origin: "mainline", Fused: []string{"k"},
		MinTP: 1, MinShare: 1, LikelyShare: 0.5, Sources: []string{"a"}, Rationale: "r",
	}}}
	err := c.Validate()
	want := "fusions[0] (x): min_share: min_share 1 is above likely_share 0.5"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v; want %s", err, want)
	}
}

// TestParseReportsAllAtOnce: problems decoding finds (an unknown field, a
// misspelt or missing required field) do not hide the ones only
// validation finds (a share out of order, an unknown reference), so one
// check lists them all; and what decoding could not read is not reported
// a second time (a misspelt "id" is not also an empty id).
func TestParseReportsAllAtOnce(t *testing.T) {
	t.Parallel()
	doc := edit(t, "    ordered: true", "    orderd: true")
	doc = edit2(t, doc, "    min_share: 0.2", "    min_share: 9")
	doc = edit2(t, doc, "    subsumes: [b-two]", "    subsumes: [no-such]")
	doc = edit2(t, doc, "  - id: o-one", "  - idd: o-one")
	doc = edit2(t, doc, "    fused: [y_fused]", "    # no fused")
	_, err := Parse([]byte(doc), "t.yaml")
	want := `t.yaml:11: fusions[0] (a-one): orderd: unknown field (did you mean ordered?)
t.yaml:20: fusions[0] (a-one): subsumes[0]: unknown fusion id "no-such"
t.yaml:24: fusions[1] (b-two): fused: required field is missing
t.yaml:30: fusions[1] (b-two): min_share: min_share 9 is above likely_share 1.5
t.yaml:35: overlaps[0]: idd: unknown field (did you mean id?)`
	if err == nil || err.Error() != want {
		t.Fatalf("got:\n%v\nwant:\n%s", err, want)
	}
}

// edit2 is edit on doc instead of base.
func edit2(t *testing.T, doc, old, repl string) string {
	t.Helper()
	if strings.Count(doc, old+"\n") != 1 {
		t.Fatalf("line %q occurs %d times", old, strings.Count(doc, old+"\n"))
	}
	return strings.Replace(doc, old+"\n", repl+"\n", 1)
}
