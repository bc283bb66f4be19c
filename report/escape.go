package report

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// escapeControl shows s without anything a terminal would act on (issue 36
// item J): control characters (ESC, BEL, NUL, DEL, the C1 range) and the
// bidirectional overrides become escapes (`\x1b`, `\u009b`, `\u202e`), a
// byte that is not UTF-8 becomes `\xff`, and tabs and line breaks become a
// space (a value stays on its line). Cuts treat each escape as one unit
// (units), so a cut never leaves half of one.
func escapeControl(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case isC1(r) || isBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += max(size, 1)
	}
	return b.String()
}

func isC1(r rune) bool { return r >= 0x80 && r < 0xa0 }

// isBidi reports the bidirectional embedding, override and isolate
// controls, which reorder what a terminal shows.
func isBidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			if c < 0x80 {
				return true
			}
			// look at the whole rune
			for _, r := range s[i:] {
				if r == utf8.RuneError || r < 0x20 || r == 0x7f || isC1(r) || isBidi(r) {
					return true
				}
			}
			return !utf8.ValidString(s[i:])
		}
	}
	return false
}
