package kernelname

import (
	"strings"
)

// Labels gives each short name of one table, chart or comparison the label
// it is shown by: its Display name, except where two different kernels of
// the set would show the same one. Those each get the shortest part of
// their names that tells them apart (issue 34 item 1), decided over this
// set only:
//   - the namespaces, when they differ (`vllm::cross_device_reduce_1stage<…>`
//     beside SGLang's `cross_device_reduce_1stage<…>`);
//   - else the template (or parameter) arguments at the first positions
//     where they differ, when the names have as many arguments
//     (DeepGEMM's shape: `sm100_fp8_gemm_1d1d_impl<…, 7168u, 16384u, …>`);
//   - else an argument only that name has, the shortest, names before
//     numbers (`vectorized_elementwise_kernel<…, CUDAFunctor_add, …>`);
//   - else all its arguments, namespaces dropped.
//
// Equal short names get equal labels; different ones never do. The result
// is parallel to shorts.
func Labels(shorts []string) []string {
	out := make([]string, len(shorts))
	parts := make([]Parts, len(shorts))
	var order []string
	groups := map[string][]string{} // display -> distinct short names, in order
	seen := map[string]bool{}
	for i, s := range shorts {
		parts[i] = Split(s)
		out[i] = display(parts[i])
		if seen[s] {
			continue
		}
		seen[s] = true
		if _, ok := groups[out[i]]; !ok {
			order = append(order, out[i])
		}
		groups[out[i]] = append(groups[out[i]], s)
	}
	label := map[string]string{}
	for _, d := range order {
		g := groups[d]
		if len(g) < 2 {
			continue
		}
		ps := make([]Parts, len(g))
		for i, s := range g {
			ps[i] = Split(s)
		}
		for i, l := range distinguish(ps) {
			label[g[i]] = l
		}
	}
	// What remains equal (a label coinciding with another kernel's display
	// name, say) is shown whole, namespaces dropped, then as written.
	for pass := 0; pass < 2; pass++ {
		owner := map[string]string{}
		clash := map[string]bool{}
		for i, s := range shorts {
			l := out[i]
			if x, ok := label[s]; ok {
				l = x
			}
			if o, ok := owner[l]; ok && o != s {
				clash[l] = true
			}
			owner[l] = s
		}
		if len(clash) == 0 {
			break
		}
		for i, s := range shorts {
			l := out[i]
			if x, ok := label[s]; ok {
				l = x
			}
			if clash[l] {
				if pass == 0 {
					label[s] = whole(parts[i])
				} else {
					label[s] = s
				}
			}
		}
	}
	for i, s := range shorts {
		if l, ok := label[s]; ok {
			out[i] = l
		}
	}
	return out
}

func display(p Parts) string {
	if p.HasTemplate {
		return p.Name + Fold
	}
	return p.Name
}

// qualified is the function's name with its namespaces.
func qualified(p Parts) string {
	if len(p.Namespaces) == 0 {
		return p.Name
	}
	return strings.Join(p.Namespaces, "::") + "::" + p.Name
}

// inner is the function's name with its k innermost namespaces.
func inner(p Parts, k int) string {
	ns := p.Namespaces[max(0, len(p.Namespaces)-k):]
	return strings.Join(append(append([]string{}, ns...), p.Name), "::")
}

// whole is the name with every argument, namespaces dropped everywhere.
func whole(p Parts) string {
	s := qualified(p)
	if p.HasTemplate {
		s += "<" + dropNamespaces(p.Template) + ">"
	}
	if p.HasParams {
		s += "(" + dropNamespaces(p.Params) + ")"
	}
	return s
}

// leaf is one argument of a name: a piece of its template arguments or
// parameter list between brackets and commas.
type leaf struct {
	text   string
	params bool // from the parameter list
}

// leaves lists the arguments of p, namespaces dropped.
func leaves(p Parts) []leaf {
	var out []leaf
	add := func(s string, params bool) {
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == '<' || r == '>' || r == ',' }) {
			if f = strings.TrimSpace(dropNamespaces(f)); f != "" {
				out = append(out, leaf{f, params})
			}
		}
	}
	add(p.Template, false)
	add(p.Params, true)
	return out
}

// distinguish labels names of one display name (at least two, all
// different): see Labels.
func distinguish(ps []Parts) []string {
	out := make([]string, len(ps))
	// Namespaces: the fewest innermost ones that tell the names apart.
	qs := map[string]bool{}
	deepest := 0
	for _, p := range ps {
		qs[qualified(p)] = true
		deepest = max(deepest, len(p.Namespaces))
	}
	if len(qs) == len(ps) {
		for k := 1; k <= deepest; k++ {
			seen := map[string]bool{}
			for i, p := range ps {
				out[i] = inner(p, k)
				if p.HasTemplate {
					out[i] += Fold
				}
				seen[out[i]] = true
			}
			if len(seen) == len(ps) {
				return out
			}
		}
	}
	name := func(p Parts) string {
		if len(qs) > 1 {
			return qualified(p)
		}
		return p.Name
	}
	ls := make([][]leaf, len(ps))
	same := true
	for i, p := range ps {
		ls[i] = leaves(p)
		same = same && len(ls[i]) == len(ls[0])
	}
	if same {
		if chosen := positions(ls); chosen != nil {
			for i, p := range ps {
				out[i] = name(p) + render(p, ls[i], chosen)
			}
			return out
		}
	}
	for i, p := range ps {
		own := ownLeaf(ls, i)
		if own < 0 {
			out[i] = whole(p)
			continue
		}
		out[i] = name(p) + render(p, ls[i], map[int]bool{own: true})
	}
	return out
}

// positions chooses, from the first on, argument positions where the
// names differ until the chosen arguments tell every name apart; nil when
// they never do.
func positions(ls [][]leaf) map[int]bool {
	chosen := map[int]bool{}
	var idx []int
	for pos := range ls[0] {
		differ := false
		for _, l := range ls[1:] {
			differ = differ || l[pos].text != ls[0][pos].text
		}
		if !differ {
			continue
		}
		chosen[pos] = true
		idx = append(idx, pos)
		keys := map[string]bool{}
		for _, l := range ls {
			var k strings.Builder
			for _, j := range idx {
				k.WriteString(l[j].text)
				k.WriteByte(0)
			}
			keys[k.String()] = true
		}
		if len(keys) == len(ls) {
			return chosen
		}
	}
	return nil
}

// ownLeaf is the index in ls[i] of the shortest argument no other name
// has, names before numbers; -1 when there is none.
func ownLeaf(ls [][]leaf, i int) int {
	others := map[string]bool{}
	for j, l := range ls {
		if j == i {
			continue
		}
		for _, x := range l {
			others[x.text] = true
		}
	}
	best := -1
	better := func(a, b leaf) bool {
		an, bn := numeric(a.text), numeric(b.text)
		if an != bn {
			return !an
		}
		return len(a.text) < len(b.text)
	}
	for k, x := range ls[i] {
		if others[x.text] {
			continue
		}
		if best < 0 || better(x, ls[i][best]) {
			best = k
		}
	}
	return best
}

// numeric reports an argument that is a number, a boolean or a cast one.
func numeric(s string) bool {
	if j := strings.LastIndexByte(s, ')'); strings.HasPrefix(s, "(") && j >= 0 {
		s = s[j+1:]
	}
	if s == "true" || s == "false" {
		return true
	}
	s = strings.TrimPrefix(s, "-")
	return s != "" && s[0] >= '0' && s[0] <= '9'
}

// render shows the chosen arguments of a name in place, `…` standing for
// the runs of arguments left out: `<…, 7168u, 16384u, …>`. A list with
// nothing chosen is folded (templates) or left out (parameters).
func render(p Parts, ls []leaf, chosen map[int]bool) string {
	section := func(params bool) string {
		var items []string
		any := false
		gap := false
		for k, l := range ls {
			if l.params != params {
				continue
			}
			if chosen[k] {
				if gap {
					items = append(items, "…")
					gap = false
				}
				items = append(items, l.text)
				any = true
			} else {
				gap = true
			}
		}
		if gap {
			items = append(items, "…")
		}
		if !any {
			return ""
		}
		return strings.Join(items, ", ")
	}
	var b strings.Builder
	if p.HasTemplate {
		if t := section(false); t != "" {
			b.WriteString("<" + t + ">")
		} else {
			b.WriteString(Fold)
		}
	}
	if p.HasParams {
		if t := section(true); t != "" {
			b.WriteString("(" + t + ")")
		}
	}
	return b.String()
}

// dropNamespaces removes every `ns::` qualifier (and `(anonymous
// namespace)::`) from s.
func dropNamespaces(s string) string {
	s = strings.ReplaceAll(s, "(anonymous namespace)::", "")
	if !strings.Contains(s, "::") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	start := 0 // start of the identifier being read
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isIdentByte(c) {
			continue
		}
		if c == ':' && i+1 < len(s) && s[i+1] == ':' && i > start {
			// drop the identifier s[start:i] and the `::`
			i++
			start = i + 1
			continue
		}
		b.WriteString(s[start : i+1])
		start = i + 1
	}
	b.WriteString(s[start:])
	return b.String()
}
