package report

import (
	"slices"
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

func TestCutMiddleAndWrap(t *testing.T) {
	t.Parallel()
	if got := cutMiddle("abcdefghijklmnop", 10); got != "abcdef…nop" || textWidth(got) != 10 {
		t.Errorf("cutMiddle: %q", got)
	}
	if got := cutMiddle("short", 10); got != "short" {
		t.Errorf("short: %q", got)
	}
	got := wrapLine("  one two three four five", 12)
	if strings.Join(got, "|") != "  one two|    three|    four|    five" {
		t.Errorf("wrap: %q", got)
	}
}

// TestEscapeControl: control characters from trace strings never reach a
// terminal raw (issue 36 J), in text or markdown, and a cut never splits
// an escape.
func TestEscapeControl(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":             "plain",
		"clear\x1b[2J":      `clear\x1b[2J`,
		"bell\a nul\x00":    `bell\x07 nul\x00`,
		"del\x7f":           `del\x7f`,
		"csi\u009b1m":       `csi\u009b1m`,
		"rtl\u202eevil":     `rtl\u202eevil`,
		"bad\xffbyte":       `bad\xffbyte`,
		"tab\tnl\ncr\r":     "tab nl cr ",
		"µs ✓ 漢字":           "µs ✓ 漢字",
		"osc\x1b]0;title\a": `osc\x1b]0;title\x07`,
	} {
		if got := escapeControl(in); got != want {
			t.Errorf("escapeControl(%q) = %q, want %q", in, got, want)
		}
	}
	hostile := "kern\x1b]0;pwned\a\x1b[2J" + strings.Repeat("x", 40)
	doc := Doc{Blocks: []any{
		&Heading{Level: 1, Text: "run \x1b[31mred"},
		Lines{"tag: \x07\x00"},
		Pre{"pre \x1b[H"},
		&Table{Columns: []Column{{Name: "Kernel", Kernel: true}, {Name: "n", Right: true}}, Rows: [][]string{{hostile, "1"}}},
	}}
	for _, width := range []int{0, 20, 24, 80} {
		for _, f := range []Format{Text, Markdown} {
			var b strings.Builder
			doc.Width = width
			if err := Render(&b, f, doc); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, r := range out {
				if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0) {
					t.Fatalf("%s at width %d: a raw control character %U in\n%q", f, width, r, out)
				}
			}
			// an escape is cut whole or not at all: no `\x1` left dangling
			if strings.Contains(out, `\x1…`) || strings.Contains(out, `\x…`) || strings.Contains(out, `\…`) {
				t.Errorf("%s at width %d: an escape was cut:\n%s", f, width, out)
			}
		}
	}
	for _, w := range []int{5, 6, 7, 8, 9, 10, 11, 12} {
		got := cutMiddle(`ab\x1bcd\x07ef\x00gh`, w)
		if strings.Contains(got, `\x…`) || strings.Contains(got, `\…`) || strings.Contains(got, `\x1…`) || strings.Contains(got, `\x0…`) {
			t.Errorf("cutMiddle to %d split an escape: %q", w, got)
		}
	}
}

// TestCutNamesKeepsThemApart: two cuBLAS names that differ only in the
// middle stay different when cut to the name column (issue 34: both read
// `sm90_xmma_…ublas` before), and no cell is wider than the column.
func TestCutNamesKeepsThemApart(t *testing.T) {
	t.Parallel()
	names := []string{
		"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
		"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
		"fused_moe_kernel",
	}
	for _, w := range []int{16, 24, 32, 40} {
		got := cutNames(names, w)
		if got[0] == got[1] {
			t.Errorf("width %d: both %q", w, got[0])
		}
		if got[2] != "fused_moe_kernel" {
			t.Errorf("width %d: a short name changed: %q", w, got[2])
		}
		for _, g := range got {
			if textWidth(g) > w {
				t.Errorf("width %d: %q is wider", w, g)
			}
		}
		if w >= 24 && (!strings.Contains(got[0], "128x") || !strings.Contains(got[1], "256x")) {
			t.Errorf("width %d: the tile that tells them apart is gone: %q", w, got)
		}
	}
}

// TestCutListDropsWholeItems: a list cell never splices two items into a
// wrong fact (issue 34: `void vllm::r…(0.9%)` read "rotary 0.9%", but
// 0.9% was store_kvcache's).
func TestCutListDropsWholeItems(t *testing.T) {
	t.Parallel()
	cell := "rotary_embedding_kernel<…> (1.0%), store_kvcache<…> (0.9%), act_and_mul_kernel<…> (2.5%)"
	for w := 12; w <= len(cell); w++ {
		got := cutList(cell, ", ", w, false)
		if textWidth(got) > w && w >= 20 {
			t.Errorf("width %d: %q is wider", w, got)
		}
		if strings.Contains(got, "rotary") && strings.Contains(got, "(0.9%)") && !strings.Contains(got, "store_kvcache") {
			t.Errorf("width %d: spliced %q", w, got)
		}
		items := strings.Count(got, "(")
		if more := strings.Contains(got, " more"); more != (items < 3) {
			t.Errorf("width %d: %q does not say what it left out", w, got)
		}
	}
	if got := cutList(cell, ", ", 50, false); got != "rotary_embedding_kernel<…> (1.0%) +2 more" {
		t.Errorf("50: %q", got)
	}
}

// TestCutPathKeepsFileLineFunction: a location loses its directories
// first, then the middle of its file name; line and function stay.
func TestCutPathKeepsFileLineFunction(t *testing.T) {
	t.Parallel()
	loc := "python/sglang/srt/layers/quantization/unquant.py:131 apply"
	for w, want := range map[int]string{
		60: loc,
		30: "…/unquant.py:131 apply",
		20: "…/unqu….py:131 apply",
	} {
		if got := cutPath(loc, w); got != want {
			t.Errorf("cutPath(%d) = %q, want %q", w, got, want)
		}
	}
	if got := cutList("a/b/x.py:1 f (site share 60%); c/y.py:2 g (site share 40%)", "; ", 30, true); got != "…/x.py:1 f (site share 60%) +1 more" && textWidth(got) > 30 {
		t.Errorf("two locations in 30: %q", got)
	}
}

// TestFitTableGivesTheNameWidthFirst: at 120 and 80 columns the kernel
// column gets at least 32 and 24, Keep and Right columns are never cut,
// Detail columns fold under the row rather than squeeze the name, and
// every line fits.
func TestFitTableGivesTheNameWidthFirst(t *testing.T) {
	t.Parallel()
	long := "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
	tab := &Table{Columns: []Column{{Name: "Kernel", Kernel: true}, {Name: "Family", Keep: true}, {Name: "GPU time", Right: true},
		{Name: "Verdict", Keep: true}, {Name: "Python location", Cut: CutPath, Sep: "; ", Detail: 2}},
		Rows: [][]string{{long, "communication", "123.45 ms", "low-roi-hidden", "python/sglang/srt/layers/quantization/unquant.py:131 apply"}}}
	for width, nameMin := range map[int]int{120: 32, 80: 24} {
		note := 0
		f := fitTable(tab, width, &note)
		if w := textWidth(f.rows[0][0]); w < nameMin {
			t.Errorf("%d: name got %d columns, want >= %d: %q", width, w, nameMin, f.rows[0][0])
		}
		for _, keep := range []string{"communication", "123.45 ms", "low-roi-hidden"} {
			if !slices.Contains(f.rows[0], keep) {
				t.Errorf("%d: %q was cut: %q", width, keep, f.rows[0])
			}
		}
		var b strings.Builder
		if err := renderText(&b, Doc{Blocks: []any{tab}, Width: width}); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
			if textWidth(l) > width {
				t.Errorf("%d: line of %d: %q", width, textWidth(l), l)
			}
		}
		if !strings.Contains(b.String(), "unquant.py:131 apply") {
			t.Errorf("%d: the location lost its file, line or function:\n%s", width, b.String())
		}
	}
}

// TestFitTableFoldsBeforeCuttingAName: a secondary (Detail) column goes
// under the row before a name is cut, at any level: the compare kernel
// table's shape, where at 120 columns the launches column stayed in the
// row while names were cut to 32. Where the name fits whole beside the
// secondary columns, nothing folds.
func TestFitTableFoldsBeforeCuttingAName(t *testing.T) {
	t.Parallel()
	name := "BatchDecodeWithPagedKVCacheKernel<…>" // 36 columns
	cols := []Column{{Name: "Bucket", Keep: true}, {Name: "Kernel", Kernel: true}, {Name: "Family", Keep: true, Detail: 1},
		{Name: "Base µs", Right: true}, {Name: "Cand µs", Right: true}, {Name: "Delta µs", Right: true}, {Name: "Delta %", Right: true},
		{Name: "p (BH)", Keep: true}, {Name: "Launches/step", Right: true, Detail: 1}, {Name: "µs/launch", Right: true, Detail: 1}}
	row := []string{"same", name, "attention", "58.5", "71.0", "12.5", "+21.4%", "too few", "4", "14.6 -> 17.8"}
	tab := &Table{Columns: cols, Rows: [][]string{row}}
	// Whole, the row is 6+36+9+7+7+8+7+7+13+12 = 112 plus 9 gaps of 2:
	// 130. Without µs/launch (14 with its gap) it is 116.
	for _, c := range []struct {
		width  int
		folded []string // the columns under the row
	}{
		{130, nil},
		{120, []string{"µs/launch"}},
		{100, []string{"Family", "Launches/step", "µs/launch"}},
	} {
		note := 0
		f := fitTable(tab, c.width, &note)
		if f.rows[0][1] != name {
			t.Errorf("%d: name cut to %q while %q stay in the row", c.width, f.rows[0][1], f.head)
		}
		var folded []string
		for i, col := range cols {
			if !slices.Contains(f.head, col.Name) && (col.Short == "" || !slices.Contains(f.head, col.Short)) {
				folded = append(folded, cols[i].Name)
			}
		}
		if !slices.Equal(folded, c.folded) {
			t.Errorf("%d: folded %q, want %q (head %q)", c.width, folded, c.folded, f.head)
		}
	}
	// A name no fold makes whole leaves the secondary columns in the row:
	// folding them would only cut the name later.
	long := "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
	tab = &Table{Columns: cols, Rows: [][]string{{"same", long, "gemm", "58.5", "71.0", "12.5", "+21.4%", "too few", "4", "14.6 -> 17.8"}}}
	note := 0
	// (µs/launch goes all the same: without it the row is 123 wide.)
	if f := fitTable(tab, 120, &note); !slices.Contains(f.head, "Launches/step") || !slices.Contains(f.head, "Family") || f.rows[0][1] == long {
		t.Errorf("a name cut whatever folds: head %q, row %q", f.head, f.rows[0])
	}
	// Of two names, one made whole by folding: the column folds.
	tab.Rows = append(tab.Rows, row)
	if f := fitTable(tab, 120, &note); slices.Contains(f.head, "µs/launch") || f.rows[1][1] != name {
		t.Errorf("one name made whole: head %q, rows %q", f.head, f.rows)
	}
}

func TestWrapBreaksLongWords(t *testing.T) {
	t.Parallel()
	got := wrapLine("  path: "+strings.Repeat("a", 30), 12)
	for _, l := range got {
		if textWidth(l) > 12 {
			t.Errorf("wrap left %q wider than 12 (%q)", l, got)
		}
	}
	if strings.ReplaceAll(strings.Join(got, ""), " ", "") != "path:"+strings.Repeat("a", 30) {
		t.Errorf("wrap lost text: %q", got)
	}
}

// TestFitTableWrapsProse: a Wrap column (a description, a switch) wraps
// within its column instead of being cut: every word is printed, every
// line fits, and the other columns stay on the row's first line.
func TestFitTableWrapsProse(t *testing.T) {
	t.Parallel()
	desc := "One row per user annotation event: the name, the thread and the time span the profiler recorded for it, in nanoseconds."
	tab := &Table{Columns: []Column{{Name: "Kind", Keep: true}, {Name: "Name", Keep: true}, {Name: "Description", Wrap: true}},
		Rows: [][]string{{"table", "annotations", desc}, {"view", "kernels", "Short."}}}
	for _, width := range []int{40, 80, 120} {
		var b strings.Builder
		if err := renderText(&b, Doc{Blocks: []any{tab}, Width: width}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		for _, l := range lines {
			if textWidth(l) > width {
				t.Errorf("%d: line of %d: %q", width, textWidth(l), l)
			}
		}
		if strings.Contains(b.String(), "…") {
			t.Errorf("%d: a wrapped column was cut:\n%s", width, b.String())
		}
		// the description's words in order, read down its column
		col := strings.Index(lines[0], "Description")
		var words []string
		for _, l := range lines[2:] {
			if strings.HasPrefix(l, "view") {
				break
			}
			words = append(words, strings.Fields(l[col:])...)
		}
		if got := strings.Join(words, " "); got != desc {
			t.Errorf("%d: description reads %q", width, got)
		}
		if !strings.HasPrefix(lines[2], "table  annotations  One row") || !strings.HasPrefix(lines[len(lines)-1], "view   kernels      Short.") {
			t.Errorf("%d: rows out of place:\n%s", width, b.String())
		}
	}
}

// TestDetailLinesPack: folded columns go under their row in their order
// while they fit on the last line; a short one that does not fit there
// joins an earlier line with room rather than start a line of its own.
func TestDetailLinesPack(t *testing.T) {
	t.Parallel()
	cols := []Column{{Name: "Family", Keep: true, Detail: 1}, {Name: "Python location", Cut: CutPath, Detail: 2}, {Name: "CPU op", Detail: 2}}
	r := []string{"gemm", "python/sglang/srt/layers/quantization/unquant.py:131 apply", "aten::mm"}
	got := detailLines(cols, r, []int{0, 1, 2}, 80)
	want := []string{"    Family: gemm; CPU op: aten::mm", "    Python location: python/sglang/srt/layers/quantization/unquant.py:131 apply"}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// in order when the last line has room: the share after the
	// per-launch time, on a line of its own
	cols = []Column{{Name: "Launches/step", Detail: 1}, {Name: "µs/launch", Detail: 1}, {Name: "Share %", Detail: 1}}
	r = []string{"4", "14.8 -> 17.7", "11.8 -> 13.9"}
	want = []string{"    Launches/step: 4; µs/launch: 14.8 -> 17.7", "    Share %: 11.8 -> 13.9"}
	if got := detailLines(cols, r, []int{0, 1, 2}, 52); !slices.Equal(got, want) {
		t.Errorf("in order:\n%s", strings.Join(got, "\n"))
	}
}

// TestCutParts: a name of `_`-separated parts with a tile drops whole
// parts from its middle, never characters, keeping its first part, its
// tile and its last part; other names are left to cutMiddle.
func TestCutParts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		w    int
		want string // "" when cutParts does not apply
	}{
		{"cutlass_bf16_relu_64x64_64x4_tn", 40, "cutlass_bf16_relu_64x64_64x4_tn"},
		{"cutlass_bf16_relu_64x64_64x4_tn", 27, "cutlass_bf16_relu_64x64…_tn"},
		{"cutlass_bf16_relu_64x64_64x4_tn", 23, "cutlass_bf16…_64x64…_tn"},
		{"cutlass_bf16_relu_64x64_64x4_tn", 22, "cutlass…_64x64…_tn"},
		{"cutlass_bf16_relu_64x64_64x4_tn", 18, "cutlass…_64x64…_tn"},
		{"cutlass_bf16_relu_64x64_64x4_tn", 17, ""}, // the three kept parts do not fit
		{"fmha_bf16_64_128_qkv_128_causal", 28, "fmha_bf16_64_128_qkv…_causal"},
		{"fmha_bf16_64_128_qkv_128_causal", 24, "fmha_bf16_64_128…_causal"},
		{"Cijk_Ailk_Bljk_HHS_MT128x128x16", 27, "Cijk_Ailk…_MT128x128x16"}, // the tile last
		{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 27, ""},               // no tile
		{"sm100_fp8_gemm_1d1d_impl<…, 7168u, …>", 20, ""},                  // not only parts
	} {
		got, ok := cutParts(c.in, c.w)
		if !ok {
			got = ""
		}
		if got != c.want {
			t.Errorf("cutParts(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
		if ok && textWidth(got) > c.w {
			t.Errorf("cutParts(%q, %d) = %q is wider", c.in, c.w, got)
		}
	}
}
