package catalog

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/parseerr"
)

var (
	slug = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	// prRef accepts "PR #123", "PR 123" and GitHub pull URLs.
	prRef = regexp.MustCompile(`(?i)\bPR\s*#?\d+\b|/pull/\d+\b`)
)

// Validate checks what decoding cannot: enums, references between entries,
// numeric ranges and keyword hygiene. Parse calls it; call it again after
// building or editing a catalog in code. Entries built in code have no
// positions, so their messages name the entry and field but no line.
func (c *Catalog) Validate() error {
	return c.validate().err()
}

func (c *Catalog) validate() errorList {
	v := &validator{file: c.File, ids: make(map[string]idSeen)}
	if c.Version != Version {
		v.add(0, at{field: "version"}, ErrValue, "unsupported catalog version %d (this tracehouse reads version %d)", c.Version, Version)
	}
	for i := range c.Fusions {
		v.fusion(c, i)
	}
	for i := range c.Overlaps {
		v.overlap(i, &c.Overlaps[i])
	}
	v.cycles(c)
	// Stable, so entries without positions keep file order.
	sort.SliceStable(v.errs, func(i, j int) bool { return v.errs[i].Line < v.errs[j].Line })
	return v.errs
}

type idSeen struct {
	entry string
	line  int
	// fusion is false for an overlap id; subsumes must name a fusion.
	fusion bool
}

type validator struct {
	file string
	errs errorList
	ids  map[string]idSeen
}

func (v *validator) add(line int, where at, kind error, format string, args ...any) {
	v.errs.add(parseerr.AtLine(v.file, line, where.entry, where.field, parseerr.Errorf(kind, format, args...)))
}

func entryLabel(list string, i int, id string) string {
	if id == "" {
		return fmt.Sprintf("%s[%d]", list, i)
	}
	return fmt.Sprintf("%s[%d] (%s)", list, i, showID(id))
}

// showID prints a well-formed id as is and quotes anything else, so a
// malformed id is visible (and cannot smuggle in spaces or line breaks).
func showID(id string) string {
	if slug.MatchString(id) {
		return id
	}
	return strconv.Quote(id)
}

// common checks the fields fusions and overlaps share.
func (v *validator) common(entry string, pos position, id, name, framework, origin string, sources []string, sw, rationale string, fusion bool) {
	w := func(field string) at { return at{entry: entry, field: field} }
	switch {
	case id == "":
		v.add(pos.of("id"), w("id"), ErrMissing, "must not be empty")
	case !slug.MatchString(id):
		v.add(pos.of("id"), w("id"), ErrValue, "want lower-case letters, digits and single dashes, got %q", id)
	default:
		if first, dup := v.ids[id]; dup {
			where := first.entry
			if first.line > 0 {
				where = fmt.Sprintf("line %d", first.line)
			}
			v.add(pos.of("id"), w("id"), ErrDuplicate, "id %q is already used (first at %s)", id, where)
		} else {
			v.ids[id] = idSeen{entry: entry, line: pos.of("id"), fusion: fusion}
		}
	}
	if strings.TrimSpace(name) == "" {
		v.add(pos.of("name"), w("name"), ErrMissing, "must not be empty")
	}
	if !contains(Frameworks, framework) {
		v.add(pos.of("framework"), w("framework"), ErrValue, "want one of %s; got %q", strings.Join(Frameworks, ", "), framework)
	}
	if !contains(origins, origin) {
		v.add(pos.of("origin"), w("origin"), ErrValue, "want one of %s; got %q", strings.Join(origins, ", "), origin)
	}
	if len(sources) == 0 {
		v.add(pos.of("sources"), w("sources"), ErrMissing, "must cite at least one source path or PR")
	}
	cited := false
	for i, s := range sources {
		field := fmt.Sprintf("sources[%d]", i)
		if strings.TrimSpace(s) == "" {
			v.add(pos.of(field), w(field), ErrValue, "empty source")
		}
		if prRef.MatchString(s) {
			cited = true
		}
	}
	if origin == "inflight" && !cited {
		v.add(pos.of("sources"), w("sources"), ErrMissing, `origin inflight must cite its pull request, e.g. "PR #12345"`)
	}
	if _, given := pos.fields["switch"]; given && strings.TrimSpace(sw) == "" {
		v.add(pos.of("switch"), w("switch"), ErrValue, "empty switch: leave the field out when it is not known")
	}
	switch {
	case strings.TrimSpace(rationale) == "":
		v.add(pos.of("rationale"), w("rationale"), ErrMissing, "must not be empty")
	case strings.ContainsRune(rationale, '\n'):
		// Reports print it on one line; a block scalar with | would break that.
		v.add(pos.of("rationale"), w("rationale"), ErrValue, "must be one line (use >- to fold a long sentence)")
	}
}

// keywords checks a keyword list: each must be usable as a substring match.
func (v *validator) keywords(entry string, pos position, field string, list []string, required bool) {
	if len(list) == 0 && required {
		v.add(pos.of(field), at{entry: entry, field: field}, ErrMissing, "must list at least one keyword")
	}
	for i, k := range list {
		f := fmt.Sprintf("%s[%d]", field, i)
		v.keyword(entry, pos, f, k)
	}
}

func (v *validator) keyword(entry string, pos position, field, k string) {
	w := at{entry: entry, field: field}
	switch {
	case strings.TrimSpace(k) == "":
		v.add(pos.of(field), w, ErrValue, "empty keyword")
	case strings.TrimSpace(k) != k:
		v.add(pos.of(field), w, ErrValue, "keyword %q has leading or trailing spaces", k)
	case Compact(k) == "":
		// Matching also compares letters and digits only, so this keyword
		// would reduce to "" and match every kernel.
		v.add(pos.of(field), w, ErrValue, "keyword %q has no letters or digits", k)
	}
}

// Compact keeps only ASCII letters and digits, lower-cased: the second form
// keywords are matched in (sqllib/fusion.sql, keyword matching).
func Compact(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (v *validator) fusion(c *Catalog, i int) {
	f := &c.Fusions[i]
	entry := entryLabel("fusions", i, f.ID)
	pos := f.pos
	w := func(field string) at { return at{entry: entry, field: field} }
	v.common(entry, pos, f.ID, f.Name, f.Framework, f.Origin, f.Sources, f.Switch, f.Rationale, true)

	v.keywords(entry, pos, "fused", f.Fused, true)
	for s, step := range f.Chain {
		field := fmt.Sprintf("chain[%d]", s)
		if len(step) == 0 {
			v.add(pos.of(field), w(field), ErrValue, "empty step: want at least one keyword")
		}
		v.keywords(entry, pos, field, step, false)
	}
	v.keywords(entry, pos, "models_any", f.ModelsAny, false)
	v.keywords(entry, pos, "models_none", f.ModelsNone, false)
	for j, m := range f.ModelsNone {
		if contains(f.ModelsAny, m) {
			field := fmt.Sprintf("models_none[%d]", j)
			v.add(pos.of(field), w(field), ErrValue, "%q is also in models_any, so the entry could never apply", m)
		}
	}

	if f.MaxGapUS < 0 || math.IsNaN(f.MaxGapUS) || math.IsInf(f.MaxGapUS, 0) {
		v.add(pos.of("max_gap_us"), w("max_gap_us"), ErrValue, "want a finite number >= 0, got %v", f.MaxGapUS)
	}
	if f.MaxBetween < 0 {
		v.add(pos.of("max_between"), w("max_between"), ErrValue, "want a number >= 0, got %d", f.MaxBetween)
	}
	if f.MinTP < 1 {
		v.add(pos.of("min_tp"), w("min_tp"), ErrValue, "want a TP size >= 1, got %d", f.MinTP)
	}
	shareOK := true
	for _, s := range []struct {
		field string
		val   float64
	}{{"min_share", f.MinShare}, {"likely_share", f.LikelyShare}} {
		if !(s.val >= 0 && s.val <= 100) {
			v.add(pos.of(s.field), w(s.field), ErrValue, "want a percentage between 0 and 100, got %v", s.val)
			shareOK = false
		}
	}
	if shareOK && f.MinShare > f.LikelyShare {
		v.add(pos.of("min_share"), w("min_share"), ErrValue, "min_share %v is above likely_share %v", f.MinShare, f.LikelyShare)
	}

	for j, id := range f.Subsumes {
		field := fmt.Sprintf("subsumes[%d]", j)
		switch target, ok := findID(c, id); {
		case id == f.ID:
			v.add(pos.of(field), w(field), ErrReference, "an entry cannot subsume itself")
		case !ok:
			v.add(pos.of(field), w(field), ErrReference, "unknown fusion id %q", id)
		case !target:
			v.add(pos.of(field), w(field), ErrReference, "%q is an overlap entry; subsumes names fusion ids", id)
		}
	}
}

// findID reports whether id names an entry, and whether that entry is a
// fusion. It looks at the whole catalog, so forward references work.
func findID(c *Catalog, id string) (fusion, ok bool) {
	if _, ok := c.Fusion(id); ok {
		return true, true
	}
	if _, ok := c.Overlap(id); ok {
		return false, true
	}
	return false, false
}

func (v *validator) overlap(i int, o *Overlap) {
	entry := entryLabel("overlaps", i, o.ID)
	v.common(entry, o.pos, o.ID, o.Name, o.Framework, o.Origin, o.Sources, o.Switch, o.Rationale, false)
	v.keywords(entry, o.pos, "keywords", o.Keywords, true)
}

// cycles reports subsumes loops: conflict resolution keeps an entry unless a
// kept entry subsumes it, which has no answer when two entries subsume each
// other. Each loop is reported once, at its first entry in file order.
func (v *validator) cycles(c *Catalog) {
	index := make(map[string]int, len(c.Fusions))
	for i, f := range c.Fusions {
		if _, dup := index[f.ID]; !dup {
			index[f.ID] = i
		}
	}
	const (
		unseen = iota
		active
		done
	)
	state := make([]int, len(c.Fusions))
	var path []int
	var visit func(i int)
	visit = func(i int) {
		state[i] = active
		path = append(path, i)
		for j, id := range c.Fusions[i].Subsumes {
			t, ok := index[id]
			if !ok || t == i {
				continue // reported as a bad reference
			}
			switch state[t] {
			case active:
				var names []string
				start := 0
				for k, p := range path {
					if p == t {
						start = k
					}
				}
				for _, p := range path[start:] {
					names = append(names, c.Fusions[p].ID)
				}
				names = append(names, id)
				f := &c.Fusions[i]
				field := fmt.Sprintf("subsumes[%d]", j)
				v.add(f.pos.of(field), at{entry: entryLabel("fusions", i, f.ID), field: field}, ErrReference,
					"subsumes loop %s", strings.Join(names, " -> "))
			case unseen:
				visit(t)
			}
		}
		path = path[:len(path)-1]
		state[i] = done
	}
	for i := range c.Fusions {
		if state[i] == unseen {
			visit(i)
		}
	}
}
