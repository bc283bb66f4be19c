package report

import (
	"strings"
	"testing"
)

// TestFitTable: a table wider than the limit gets its text columns cut to
// one cap (numbers untouched, narrow columns untouched), every line within
// the width, prose moved into numbered notes; width 0 prints all of it.
func TestFitTable(t *testing.T) {
	t.Parallel()
	tab := &Table{Columns: []Column{{Name: "Kernel"}, {Name: "Fam"}, {Name: "Time", Right: true}, {Name: "Why", Prose: true}},
		Rows: [][]string{
			{"void flashinfer::BatchDecodeWithPagedKVCacheKernel<flashinfer::DefaultAttention>", "attn", "123.45 ms", "Because the split chain runs twice per layer."},
			{"gemm", "gemm", "1.00 ms", "-"},
		}}
	var b strings.Builder
	if err := renderText(&b, Doc{Blocks: []any{tab}, Width: 40}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	for _, l := range lines {
		if textWidth(l) > 40 {
			t.Errorf("line wider than 40: %q", l)
		}
	}
	if !strings.Contains(lines[2], "123.45 ms") || !strings.Contains(lines[2], "[1]") || !strings.Contains(lines[2], "…") {
		t.Errorf("row: %q", lines[2])
	}
	if !strings.HasPrefix(lines[3], "gemm ") || !strings.HasSuffix(lines[3], "-") {
		t.Errorf("short row changed: %q", lines[3])
	}
	notes := strings.Join(strings.Fields(strings.Join(lines[4:], " ")), " ")
	if notes != "[1] Why: Because the split chain runs twice per layer." {
		t.Errorf("notes: %q", notes)
	}
	b.Reset()
	if err := renderText(&b, Doc{Blocks: []any{tab}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), tab.Rows[0][0]) || !strings.Contains(b.String(), tab.Rows[0][3]) {
		t.Errorf("width 0 shortened something:\n%s", b.String())
	}
}

func TestMiddleEllipsisAndWrap(t *testing.T) {
	t.Parallel()
	if got := middleEllipsis("abcdefghijklmnop", 10); got != "abcdef…nop" || textWidth(got) != 10 {
		t.Errorf("middleEllipsis: %q", got)
	}
	if got := middleEllipsis("short", 10); got != "short" {
		t.Errorf("short: %q", got)
	}
	got := wrapLine("  one two three four five", 12)
	if strings.Join(got, "|") != "  one two|    three|    four|    five" {
		t.Errorf("wrap: %q", got)
	}
}
