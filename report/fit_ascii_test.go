package report

import (
	"strings"
	"testing"

	"github.com/rivo/uniseg"
)

// textWidth and units take a shortcut for printable ASCII; on any string
// they must agree with uniseg, which measures and segments the rest.
func TestASCIIShortcutAgreesWithUniseg(t *testing.T) {
	for _, s := range []string{
		"", "a", "gemm_kernel<128, 64>::run", "12.5 ms (41.2%)",
		"e\u0301",      // e + combining acute: one cluster
		"cafe\u0301 x", // ASCII before a combining mark
		"a\u200db",     // zero-width joiner after ASCII
		"核函数 kernel",   // wide characters
		"x👍🏽y",         // emoji with a modifier
		"tab\there",    // a control character
		"\\x1b[31m",    // escapeControl's output is ASCII
		"…" + "abc",    // the ellipsis
		"abc\r\ndef",   // CR LF
	} {
		if got, want := textWidth(s), uniseg.StringWidth(s); got != want {
			t.Errorf("textWidth(%q) = %d, uniseg says %d", s, got, want)
		}
		var want []string
		for rest := s; len(rest) > 0; {
			if n := escapeLen(rest); n > 0 {
				want, rest = append(want, rest[:n]), rest[n:]
				continue
			}
			c, r, _, _ := uniseg.FirstGraphemeClusterInString(rest, -1)
			want, rest = append(want, c), r
		}
		if got := units(s); strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("units(%q) = %q, want %q", s, got, want)
		}
	}
}
