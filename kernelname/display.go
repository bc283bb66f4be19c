// Package kernelname makes kernel names readable: the display name of a
// kernel (issue 34 item 1), defined once here and stored by ingest in
// kernel_names.display_name, and the labels of one table, chart or
// comparison, where two kernels with the same display name each get the
// shortest part of their names that tells them apart.
//
// Everything works on a kernel's short name (kernel_names.short_name: the
// demangled name, parameter list of a `void ...(...)` signature dropped)
// and never panics: one linear pass per name, plus a bounded comparison of
// the names that collide.
package kernelname

import (
	"strings"
)

// Fold is what a template argument list becomes in a display name.
const Fold = "<…>"

// wrappers are kernel templates that only launch the kernel type they are
// given (CUTLASS's device_kernel, FlashAttention-3's architecture guard,
// composable kernel's kentry): the display name is the wrapped type's.
var wrappers = map[string]bool{
	"cutlass::device_kernel":      true,
	"cutlass::Kernel":             true,
	"cutlass::Kernel2":            true,
	"flash::enable_sm80_to_sm89":  true,
	"flash::enable_sm90_or_later": true,
	"flash::enable_sm90":          true,
	"flash::enable_sm100":         true,
	"ck_tile::kentry":             true,
}

// Parts is a kernel name taken apart: the function's namespaces, its own
// name, its template arguments and the parameter list still attached to
// it (Kineto keeps one on names that are not `void ...` signatures).
type Parts struct {
	// Namespaces are the qualifiers of the function, outermost first,
	// without the `(anonymous namespace)` ones.
	Namespaces []string
	// Name is the function's own name (or the whole text when the name is
	// not a C++ name: `Memcpy HtoD (Pageable -> Device)`).
	Name string
	// Template is the function's template argument list without its
	// brackets; "" when it has none.
	Template string
	// HasTemplate tells `f<>` from `f`.
	HasTemplate bool
	// Params is the parameter list without its parentheses; "" when none.
	Params    string
	HasParams bool
}

// Split takes a short name apart (see Parts). A `void ` return type is
// dropped, and a wrapper template (cutlass::device_kernel<X>, ...) is
// replaced by the kernel type X it launches.
func Split(short string) Parts {
	s := strings.TrimSpace(short)
	s = strings.TrimPrefix(s, "void ")
	var p Parts
	// A parameter list glued to the name: `nccl...(ncclDevKernelArgsStorage<4096ul>)`.
	// One after a space belongs to a plain-text name (`Memset (Device)`).
	if strings.HasSuffix(s, ")") {
		if open := matchingOpen(s, len(s)-1); open > 0 && s[open-1] != ' ' && isNameEnd(s[open-1]) {
			p.Params, p.HasParams = s[open+1:len(s)-1], true
			s = s[:open]
		}
	}
	if !isCxxName(s) {
		p.Name = s
		return p
	}
	for {
		comps := splitTop(s, "::")
		last := comps[len(comps)-1]
		fn, targs, hasT := cutTemplate(last)
		qual := strings.Join(append(append([]string{}, comps[:len(comps)-1]...), fn), "::")
		if hasT && wrappers[stripAnon(qual)] {
			if inner := wrappedType(targs); inner != "" && isCxxName(inner) {
				s = inner
				continue
			}
		}
		for _, c := range comps[:len(comps)-1] {
			if c != "(anonymous namespace)" {
				p.Namespaces = append(p.Namespaces, c)
			}
		}
		p.Name, p.Template, p.HasTemplate = fn, targs, hasT
		return p
	}
}

// Display is the name a person reads for a kernel (issue 34 item 1): no
// return type, no parameter list, no namespaces, template arguments
// folded to `<…>`, a wrapper template replaced by the kernel it launches.
// A name that is already a plain identifier (nvjet, NCCL, Triton, cuBLAS
// names) or plain text (`Memcpy HtoD (Pageable -> Device)`) is unchanged
// but for a parameter list glued to it.
func Display(short string) string {
	p := Split(short)
	if p.HasTemplate {
		return p.Name + Fold
	}
	return p.Name
}

// matchingOpen returns the index of the '(' that the ')' at close closes,
// or -1.
func matchingOpen(s string, close int) int {
	depth := 0
	for i := close; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// isNameEnd reports a byte a function name (or its template list) ends with.
func isNameEnd(c byte) bool { return isIdentByte(c) || c == '>' }

// isCxxName reports a qualified C++ name: identifiers, `::`, balanced
// template arguments, `(anonymous namespace)`; no blanks outside brackets.
func isCxxName(s string) bool {
	if s == "" {
		return false
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '<' || c == '(' || c == '{' || c == '[':
			depth++
		case c == '>' || c == ')' || c == '}' || c == ']':
			depth--
			if depth < 0 {
				return false
			}
		case depth == 0 && c == ' ':
			if !strings.HasPrefix(s[i:], " namespace)") {
				return false
			}
		case depth == 0 && !isIdentByte(c) && c != ':' && c != '~':
			return false
		}
	}
	return depth == 0
}

// splitTop splits s at every sep outside brackets.
func splitTop(s, sep string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '(', '{', '[':
			depth++
		case '>', ')', '}', ']':
			depth--
		default:
			if depth == 0 && strings.HasPrefix(s[i:], sep) {
				out = append(out, s[start:i])
				i += len(sep) - 1
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// cutTemplate splits `name<args>` into name and args.
func cutTemplate(c string) (name, args string, ok bool) {
	i := strings.IndexByte(c, '<')
	if i <= 0 || !strings.HasSuffix(c, ">") {
		return c, "", false
	}
	return c[:i], strings.TrimSpace(c[i+1 : len(c)-1]), true
}

func stripAnon(q string) string {
	return strings.ReplaceAll(q, "(anonymous namespace)::", "")
}

// wrappedType is the kernel type a wrapper template launches: its first
// template argument that is a name rather than a number or a cast.
func wrappedType(args string) string {
	for _, a := range splitTop(args, ",") {
		a = strings.TrimSpace(a)
		if a != "" && (a[0] == '_' || a[0] >= 'a' && a[0] <= 'z' || a[0] >= 'A' && a[0] <= 'Z') {
			return a
		}
	}
	return ""
}
