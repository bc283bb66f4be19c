package shellwords

import (
	"slices"
	"strings"
	"testing"
)

// TestSplit: a line splits like a shell splits it.
func TestSplit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"--metric step_time", []string{"--metric", "step_time"}, ""},
		{"  --kernel  'a|b c'\t--stage decode ", []string{"--kernel", "a|b c", "--stage", "decode"}, ""},
		{`--kernel "x\"y" --tag k=v\ w`, []string{"--kernel", `x"y`, "--tag", "k=v w"}, ""},
		{`'it''s' "" 'a\b'`, []string{"its", "", `a\b`}, ""},
		{"", nil, ""},
		{"'open", nil, "unterminated ' quote"},
		{`trailing\`, nil, "ends it"},
	} {
		got, err := Split(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
