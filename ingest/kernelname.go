package ingest

// Kernel-name normalisation: the forms of a GPU event name the warehouse
// stores in kernel_names (demangled, short_name, base_name, display_name). Each runs once
// per distinct name, but names of templated kernels reach tens of kilobytes
// and a hostile trace can hold far longer ones, so every function here is a
// single linear pass (or a bounded library call) and never panics.

import (
	"strings"

	"github.com/ianlancetaylor/demangle"

	"github.com/tracehouse/tracehouse/kernelname"
)

// maxMangledLen bounds the names handed to the demangler. Real mangled
// kernel names stay under ~20 KB; the demangler's cost on adversarial input
// grows faster than linearly, so longer names are kept as written.
const maxMangledLen = 1 << 16

// maxDemangledPow caps the demangled text at 2^20 bytes: substitutions let a
// short mangled name expand enormously, and such a name is useless to a
// reader anyway.
const maxDemangledPow = 20

// hexPlaceholder replaces every hex literal in a short name. It is itself not
// a hex literal under hexLiteralEnd's rule (the R continues the token), which
// keeps ShortName idempotent.
const hexPlaceholder = "0xADDR"

// KernelNameForms holds the normalised forms of one raw GPU event name.
type KernelNameForms struct {
	// Demangled is the Itanium-demangled name; empty when Mangled is false.
	Demangled string
	// Mangled reports that the raw name was a mangled C++ name the
	// demangler understood.
	Mangled bool
	// Short is the report's row key (ShortName of the demangled form, or of
	// the raw name when it is not mangled).
	Short string
	// Base is Short without template argument lists (BaseName).
	Base string
	// Display is the name reports show (kernelname.Display of Short).
	Display string
}

// NormalizeKernelName computes every stored form of a raw kernel name: the
// demangled text when the name is mangled, then the short and base names of
// the demangled text (the classifier's rules apply to the demangled form).
func NormalizeKernelName(raw string) KernelNameForms {
	var f KernelNameForms
	text := raw
	if d, ok := Demangle(raw); ok {
		f.Demangled, f.Mangled, text = d, true, d
	}
	f.Short = ShortName(text)
	f.Base = BaseName(f.Short)
	f.Display = kernelname.Display(f.Short)
	return f
}

// Demangle returns the Itanium-demangled form of name and true when name is a
// mangled C++ symbol (`_Z...`, or `__Z...` as macOS tools write it) that the
// demangler understands. Otherwise it returns name unchanged and false: a name
// that is not mangled, cannot be demangled, or is longer than 64 KiB. Clone
// suffixes (`.kd`, `.cold`, `.isra.0`) are dropped from the demangled text:
// they name the same kernel.
func Demangle(name string) (demangled string, ok bool) {
	m := strings.TrimSpace(name)
	if strings.HasPrefix(m, "__Z") {
		m = m[1:]
	}
	if !strings.HasPrefix(m, "_Z") || len(m) > maxMangledLen {
		return name, false
	}
	// The library recovers its own panics today; this guard keeps a future
	// regression in it from taking an ingest down with it.
	defer func() {
		if recover() != nil {
			demangled, ok = name, false
		}
	}()
	s, err := demangle.ToString(m, demangle.NoClones, demangle.NoRust, demangle.MaxLength(maxDemangledPow))
	if err != nil || s == "" {
		return name, false
	}
	return s, true
}

// ShortName returns the report's row key for a kernel name: runs of ASCII whitespace (the only kind trace writers emit)
// collapse to one space and the ends are trimmed; every hex literal 0x...
// becomes 0xADDR; and when the name starts with `void ` and ends with `)`,
// the final balanced parenthesised parameter list is dropped. Template arguments are kept: they tell kernel variants apart.
// Pass the demangled form when the raw name is mangled.
//
// ShortName is idempotent. When what remains after dropping the parameter
// list would itself end in a droppable list (`void f(a)(b)`, never a real
// kernel signature), the name is not a plain signature and is kept whole.
func ShortName(name string) string {
	s := collapseSpace(name)
	s = replaceHex(s)
	return dropParams(s)
}

// isASCIISpace reports ASCII whitespace, the only kind trace writers emit.
func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// isIdentByte reports a C identifier byte.
func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// collapseSpace turns every whitespace run into one space and trims both ends,
// returning s itself when it is already clean (the common case).
func collapseSpace(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isASCIISpace(c) {
			continue
		}
		if c != ' ' || i == 0 || i == len(s)-1 || s[i+1] == ' ' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isASCIISpace(c) {
			pending = b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// hexLiteralEnd returns the end of the hex literal starting at s[i], or -1
// when none starts there. A literal is `0x` or `0X`, one or more hex digits
// and optional integer suffixes (u, l), standing as a token of its own: not
// preceded or followed by an identifier byte. So `0x7f12ab`, `(void*)0x10`
// and `0x10UL` are literals; `foo0x1` and the placeholder `0xADDR` are not.
func hexLiteralEnd(s string, i int) int {
	if i+2 >= len(s) || s[i] != '0' || (s[i+1] != 'x' && s[i+1] != 'X') {
		return -1
	}
	if i > 0 && isIdentByte(s[i-1]) {
		return -1
	}
	j := i + 2
	for j < len(s) && isHexDigit(s[j]) {
		j++
	}
	if j == i+2 {
		return -1
	}
	for j < len(s) && (s[j] == 'u' || s[j] == 'U' || s[j] == 'l' || s[j] == 'L') {
		j++
	}
	if j < len(s) && isIdentByte(s[j]) {
		return -1
	}
	return j
}

// replaceHex replaces every hex literal with hexPlaceholder.
func replaceHex(s string) string {
	first := -1
	for i := strings.IndexByte(s, '0'); i >= 0 && i < len(s); {
		if hexLiteralEnd(s, i) >= 0 {
			first = i
			break
		}
		k := strings.IndexByte(s[i+1:], '0')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	if first < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:first])
	for i := first; i < len(s); {
		if s[i] == '0' {
			if j := hexLiteralEnd(s, i); j >= 0 {
				b.WriteString(hexPlaceholder)
				i = j
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// dropParams drops the final balanced parameter list of a `void ...)`
// signature (see ShortName for the rule that keeps it idempotent).
func dropParams(s string) string {
	head, ok := paramHead(s)
	if !ok {
		return s
	}
	if _, again := paramHead(head); again {
		return s
	}
	return head
}

// paramHead returns s without its final balanced parenthesised group (and
// the spaces before it) when s starts with `void `, ends with `)`, the group
// is balanced, and the group is not the `()` of an `operator()` name.
func paramHead(s string) (string, bool) {
	if !strings.HasPrefix(s, "void ") || !strings.HasSuffix(s, ")") {
		return s, false
	}
	// Scan back from the final ')' counting parentheses only: whatever the
	// list holds (nested parameter lists, function-pointer types, casts in
	// template arguments such as `Foo<(int)3>`) is balanced in a demangled
	// name, and angle brackets cannot be counted reliably (`operator<`, `->`).
	depth := 0
	open := -1
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
		}
		if depth == 0 {
			open = i
			break
		}
	}
	if open < 0 {
		return s, false
	}
	head := strings.TrimRight(s[:open], " ")
	if open == len(s)-2 && endsWithWord(head, "operator") {
		return s, false
	}
	return head, true
}

// endsWithWord reports that s ends with the identifier w standing on its own
// (not the tail of a longer identifier).
func endsWithWord(s, w string) bool {
	if !strings.HasSuffix(s, w) {
		return false
	}
	k := len(s) - len(w)
	return k == 0 || !isIdentByte(s[k-1])
}

// BaseName returns a short name with every balanced template argument list
// `<...>` removed, the key two-trace matching falls back to. Operator names
// (`operator<`, `operator<<`, `operator<=>`, `operator>>`, `operator->`) and
// arrows (`->`, as in `Memcpy HtoD (Pageable -> Device)`) are not brackets;
// a `<` only opens a list right after an identifier (so `<unnamed>` and
// `a < b` stay); inside a list, angle brackets within parentheses are
// expressions (`Foo<(1<<3)>`) and do not count. An unbalanced `<` is kept
// as written. One pass with a stack: linear even on pathological input.
func BaseName(short string) string {
	if strings.IndexByte(short, '<') < 0 {
		return short
	}
	type frame struct {
		kind byte // '<' or '('
		out  int  // output length when the frame opened
	}
	var stack []frame
	angles := 0 // '<' frames on the stack
	out := make([]byte, 0, len(short))
	afterOperator := false // the previous token was an operator name
	for i := 0; i < len(short); i++ {
		c := short[i]
		if n := operatorToken(short, i); n > 0 {
			out = append(out, short[i:i+n]...)
			i += n - 1
			afterOperator = true
			continue
		}
		wasOperator := afterOperator
		if c != ' ' {
			afterOperator = false
		}
		switch c {
		case '(':
			stack = append(stack, frame{kind: '(', out: len(out)})
		case ')':
			if len(stack) > 0 && stack[len(stack)-1].kind == '(' {
				stack = stack[:len(stack)-1]
			}
		case '<':
			inParens := len(stack) > 0 && stack[len(stack)-1].kind == '('
			opens := (i > 0 && isIdentByte(short[i-1])) || wasOperator
			if opens && !(inParens && angles > 0) {
				at := len(out)
				if wasOperator && at > 0 && out[at-1] == ' ' {
					at-- // `operator< <int>` becomes `operator<`
				}
				stack = append(stack, frame{kind: '<', out: at})
				angles++
			}
		case '>':
			if i > 0 && short[i-1] == '-' {
				break // an arrow
			}
			if len(stack) > 0 && stack[len(stack)-1].kind == '<' {
				out = out[:stack[len(stack)-1].out]
				stack = stack[:len(stack)-1]
				angles--
				continue
			}
		}
		out = append(out, c)
	}
	return string(out)
}

// operatorToken returns the length of the operator name token starting at
// s[i] (`<`, `<<`, `<=`, `<=>`, `<<=`, `>`, `>>`, `>=`, `>>=`, `->`, `->*`)
// when it directly follows the identifier `operator`, or 0.
func operatorToken(s string, i int) int {
	c := s[i]
	if c != '<' && c != '>' && c != '-' {
		return 0
	}
	if !endsWithWord(strings.TrimRight(s[:i], " "), "operator") {
		return 0
	}
	for _, tok := range [...]string{"<=>", "<<=", ">>=", "->*", "<<", ">>", "<=", ">=", "->", "<", ">"} {
		if strings.HasPrefix(s[i:], tok) {
			return len(tok)
		}
	}
	return 0 // `operator-` and friends: not brackets, handled as plain bytes
}
