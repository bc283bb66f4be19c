package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/parseerr"
	"go.yaml.in/yaml/v3"
)

// The decoder walks yaml.Node trees by hand instead of unmarshalling into
// structs: that is what lets every problem carry its own line and field, and
// lets it reject unknown fields, wrong scalar types and duplicate keys that
// struct decoding would silently accept or report without a position.

var (
	topFields    = []string{"version", "fusions", "overlaps"}
	topRequired  = []string{"version"}
	fusionFields = []string{
		"id", "name", "framework", "origin", "fused", "chain", "ordered",
		"max_gap_us", "max_between", "models_any", "models_none", "min_tp",
		"min_share", "likely_share", "priority", "subsumes", "sources",
		"switch", "rationale",
	}
	fusionRequired = []string{
		"id", "name", "framework", "origin", "fused", "min_share",
		"likely_share", "sources", "rationale",
	}
	overlapFields = []string{
		"id", "name", "framework", "origin", "keywords", "sources", "switch",
		"rationale",
	}
	overlapRequired = []string{
		"id", "name", "framework", "origin", "keywords", "sources", "rationale",
	}
)

type decoder struct {
	file string
	errs errorList
	// also are fields a misspelling stood for (entry and field, as
	// errKey): no value was read for them, which Validate must not report
	// again.
	also []string
}

// at says where a value sits: the entry label and the field path.
type at struct {
	entry, field string
}

func (d *decoder) fail(line int, where at, err error) {
	d.errs.add(parseerr.AtLine(d.file, line, where.entry, where.field, err))
}

func (d *decoder) failf(line int, where at, kind error, format string, args ...any) {
	d.fail(line, where, parseerr.Errorf(kind, format, args...))
}

var yamlLine = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)

// parserProblems are the messages of yaml.v3's parser (as opposed to its
// scanner). yaml.v3 v3.0.x prints the 0-based line for these and omits it
// on the first line, while scanner errors get a 1-based line; we correct
// the parser's so every message points at the right line.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// syntax turns a yaml.v3 error ("yaml: line 3: did not find expected key")
// into a positioned error.
func (d *decoder) syntax(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if parserProblems[msg] {
		line++
	}
	d.fail(line, at{}, parseerr.Errorf(ErrSyntax, "%s", msg))
}

func decode(data []byte, file string) (*Catalog, errorList, []string) {
	d := &decoder{file: file}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.failf(1, at{}, ErrMissing, "empty file: want a mapping with version, fusions and overlaps")
		} else {
			d.syntax(err)
		}
		return nil, d.errs, nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		d.failf(extra.Line, at{}, ErrSyntax, "a second YAML document; a catalog is one document")
		return nil, d.errs, nil
	case !errors.Is(err, io.EOF):
		d.syntax(err)
		return nil, d.errs, nil
	}

	root := resolve(&doc)
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = resolve(root.Content[0])
	}
	if root.Kind != yaml.MappingNode {
		d.failf(root.Line, at{}, ErrType, "want a mapping with version, fusions and overlaps, got %s", describe(root))
		return nil, d.errs, nil
	}
	c := &Catalog{}
	m, _ := d.mapping(root, at{}, topFields, topRequired)
	if n := m["version"]; n != nil {
		if v, ok := d.integer(n, at{field: "version"}); ok {
			if v != Version {
				d.failf(n.Line, at{field: "version"}, ErrValue, "unsupported catalog version %d (this tracehouse reads version %d)", v, Version)
			}
			c.Version = v
		}
	}
	// Every entry that is a mapping is kept, even with problems, so that
	// Parse can validate the rest of it too and report every problem at
	// once (not in waves, each hiding the next).
	if n := m["fusions"]; n != nil {
		for i, e := range d.list(n, at{field: "fusions"}) {
			if f, ok := d.fusion(e, i); ok {
				c.Fusions = append(c.Fusions, f)
			}
		}
	}
	if n := m["overlaps"]; n != nil {
		for i, e := range d.list(n, at{field: "overlaps"}) {
			if o, ok := d.overlap(e, i); ok {
				c.Overlaps = append(c.Overlaps, o)
			}
		}
	}
	return c, d.errs, d.also
}

// errKey names an entry's field for matching problems of decode and
// Validate: the entry's list and index ("fusions[3]", without the id the
// two may show differently) and the field's name without its index.
func errKey(entry, field string) string {
	if i := strings.IndexByte(entry, ']'); i >= 0 {
		entry = entry[:i+1]
	}
	if i := strings.IndexByte(field, '['); i >= 0 {
		field = field[:i]
	}
	return entry + "|" + field
}

// label names entry i of a list, with its id when the id is a usable string,
// so a message says which entry without the reader counting.
func label(list string, i int, n *yaml.Node) string {
	s := fmt.Sprintf("%s[%d]", list, i)
	if n.Kind != yaml.MappingNode {
		return s
	}
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], resolve(n.Content[j+1])
		if k.Value == "id" && v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" && v.Value != "" {
			return s + " (" + showID(v.Value) + ")"
		}
	}
	return s
}

func (d *decoder) fusion(n *yaml.Node, i int) (Fusion, bool) {
	n = resolve(n)
	where := at{entry: label("fusions", i, n)}
	if n.Kind != yaml.MappingNode {
		d.failf(n.Line, where, ErrType, "want a mapping, got %s", describe(n))
		return Fusion{}, false
	}
	m, pos := d.mapping(n, where, fusionFields, fusionRequired)
	f := Fusion{
		Ordered:    true,
		MaxGapUS:   DefaultMaxGapUS,
		MaxBetween: DefaultMaxBetween,
		MinTP:      DefaultMinTP,
		pos:        pos,
	}
	e := entry{d: d, m: m, entry: where.entry, pos: pos}
	e.str("id", &f.ID)
	e.str("name", &f.Name)
	e.str("framework", &f.Framework)
	e.str("origin", &f.Origin)
	e.strList("fused", &f.Fused)
	if v, w := e.field("chain"); v != nil {
		f.Chain = d.chain(v, w, pos)
	}
	e.boolean("ordered", &f.Ordered)
	e.number("max_gap_us", &f.MaxGapUS)
	e.integer("max_between", &f.MaxBetween)
	e.strList("models_any", &f.ModelsAny)
	e.strList("models_none", &f.ModelsNone)
	e.integer("min_tp", &f.MinTP)
	e.number("min_share", &f.MinShare)
	e.number("likely_share", &f.LikelyShare)
	e.integer("priority", &f.Priority)
	e.strList("subsumes", &f.Subsumes)
	e.strList("sources", &f.Sources)
	e.str("switch", &f.Switch)
	e.str("rationale", &f.Rationale)
	return f, true
}

func (d *decoder) overlap(n *yaml.Node, i int) (Overlap, bool) {
	n = resolve(n)
	where := at{entry: label("overlaps", i, n)}
	if n.Kind != yaml.MappingNode {
		d.failf(n.Line, where, ErrType, "want a mapping, got %s", describe(n))
		return Overlap{}, false
	}
	m, pos := d.mapping(n, where, overlapFields, overlapRequired)
	o := Overlap{pos: pos}
	e := entry{d: d, m: m, entry: where.entry, pos: pos}
	e.str("id", &o.ID)
	e.str("name", &o.Name)
	e.str("framework", &o.Framework)
	e.str("origin", &o.Origin)
	e.strList("keywords", &o.Keywords)
	e.strList("sources", &o.Sources)
	e.str("switch", &o.Switch)
	e.str("rationale", &o.Rationale)
	return o, true
}

// entry sets an entry's Go fields from its mapping, one line per key, so
// fusions and overlaps decode their shared keys the same way. A key that
// is absent leaves the field's default; one of the wrong type is reported
// by the decoder and leaves it too.
type entry struct {
	d     *decoder
	m     map[string]*yaml.Node
	entry string
	pos   position
}

func (e entry) field(name string) (*yaml.Node, at) {
	return e.m[name], at{entry: e.entry, field: name}
}

func (e entry) str(name string, dst *string) {
	if v, w := e.field(name); v != nil {
		if s, ok := e.d.str(v, w); ok {
			*dst = s
		}
	}
}

func (e entry) strList(name string, dst *[]string) {
	if v, w := e.field(name); v != nil {
		*dst = e.d.strList(v, w, e.pos)
	}
}

func (e entry) number(name string, dst *float64) {
	if v, w := e.field(name); v != nil {
		if x, ok := e.d.number(v, w); ok {
			*dst = x
		}
	}
}

func (e entry) integer(name string, dst *int) {
	if v, w := e.field(name); v != nil {
		if x, ok := e.d.integer(v, w); ok {
			*dst = x
		}
	}
}

func (e entry) boolean(name string, dst *bool) {
	if v, w := e.field(name); v != nil {
		if b, ok := e.d.boolean(v, w); ok {
			*dst = b
		}
	}
}

// mapping returns a mapping's values by key, reporting unknown keys, keys
// given twice and required keys that are missing. It also returns where each
// value was written.
func (d *decoder) mapping(n *yaml.Node, where at, allowed, required []string) (map[string]*yaml.Node, position) {
	m := make(map[string]*yaml.Node, len(n.Content)/2)
	pos := position{line: n.Line, fields: make(map[string]int, len(n.Content)/2)}
	keyLine := make(map[string]int, len(n.Content)/2)
	// A misspelt required field is reported once, as the misspelling.
	suggested := make(map[string]bool)
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := resolve(n.Content[j]), resolve(n.Content[j+1])
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			d.failf(k.Line, where, ErrType, "want a field name, got %s", describe(k))
			continue
		}
		w := at{entry: where.entry, field: k.Value}
		if !contains(allowed, k.Value) {
			msg := "unknown field"
			if s := closest(k.Value, allowed); s != "" {
				msg += " (did you mean " + s + "?)"
				suggested[s] = true
				d.also = append(d.also, errKey(where.entry, s))
			}
			d.fail(k.Line, w, parseerr.Errorf(ErrUnknownField, "%s", msg))
			continue
		}
		if first, dup := keyLine[k.Value]; dup {
			d.failf(k.Line, w, ErrDuplicate, "field given twice (first on line %d)", first)
			continue
		}
		keyLine[k.Value] = k.Line
		m[k.Value] = v
		pos.fields[k.Value] = v.Line
	}
	for _, r := range required {
		if _, ok := m[r]; !ok {
			if suggested[r] {
				continue
			}
			d.fail(n.Line, at{entry: where.entry, field: r}, parseerr.Errorf(ErrMissing, "required field is missing"))
		}
	}
	return m, pos
}

// list returns a sequence's items, or reports that n is not a sequence.
func (d *decoder) list(n *yaml.Node, where at) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		d.failf(n.Line, where, ErrType, "want a list, got %s", describe(n))
		return nil
	}
	return n.Content
}

func (d *decoder) str(n *yaml.Node, where at) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		d.failf(n.Line, where, ErrType, "want a string, got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

// strList decodes a list of strings and records each item's line under
// "field[i]" so Validate can point at a bad keyword.
func (d *decoder) strList(n *yaml.Node, where at, pos position) []string {
	items := d.list(n, where)
	if items == nil {
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		it = resolve(it)
		w := at{entry: where.entry, field: fmt.Sprintf("%s[%d]", where.field, i)}
		if s, ok := d.str(it, w); ok {
			out = append(out, s)
			pos.fields[w.field] = it.Line
		}
	}
	return out
}

// chain decodes a list of steps, each a list of alternative keywords.
func (d *decoder) chain(n *yaml.Node, where at, pos position) [][]string {
	steps := d.list(n, where)
	if steps == nil {
		return nil
	}
	out := make([][]string, 0, len(steps))
	for i, st := range steps {
		st = resolve(st)
		w := at{entry: where.entry, field: fmt.Sprintf("%s[%d]", where.field, i)}
		pos.fields[w.field] = st.Line
		if st.Kind != yaml.SequenceNode {
			// A bare keyword where a step belongs is the likeliest slip; say so.
			d.failf(st.Line, w, ErrType, "want a list of alternative keywords, got %s", describe(st))
			continue
		}
		out = append(out, d.strList(st, w, pos))
	}
	return out
}

func (d *decoder) number(n *yaml.Node, where at) (float64, bool) {
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") {
		d.failf(n.Line, where, ErrType, "want a number, got %s", describe(n))
		return 0, false
	}
	var x float64
	if err := n.Decode(&x); err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		d.failf(n.Line, where, ErrType, "want a finite number, got %s", describe(n))
		return 0, false
	}
	return x, true
}

func (d *decoder) integer(n *yaml.Node, where at) (int, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		d.failf(n.Line, where, ErrType, "want a whole number, got %s", describe(n))
		return 0, false
	}
	var x int
	if err := n.Decode(&x); err != nil {
		d.failf(n.Line, where, ErrType, "want a whole number that fits an int, got %s", describe(n))
		return 0, false
	}
	return x, true
}

func (d *decoder) boolean(n *yaml.Node, where at) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		d.failf(n.Line, where, ErrType, "want true or false, got %s", describe(n))
		return false, false
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		d.failf(n.Line, where, ErrType, "want true or false, got %s", describe(n))
		return false, false
	}
	return b, true
}

// resolve follows an alias to the node it names, so anchors can share lists.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// describe says what a node is, for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.DocumentNode:
		return "a document"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "nothing (null)"
		case "!!str":
			return strconv.Quote(n.Value)
		}
		return n.Value
	}
	return "an unsupported node"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// closest returns the allowed name nearest to s when it is a plausible typo
// (edit distance at most 2, or a prefix of one), else "".
func closest(s string, allowed []string) string {
	best, bestD := "", 3
	for _, a := range allowed {
		dist := levenshtein(s, a)
		if strings.HasPrefix(a, s) && len(s) >= 3 && dist > 2 {
			dist = 2
		}
		if dist < bestD {
			best, bestD = a, dist
		}
	}
	return best
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
