package report

import (
	"fmt"
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
// first, then their "…/", then the end of its function's name, and only
// then the middle of its file's base name; the ":line" stays (issue 34:
// `forward @ …/vocab_parall…ing.py:487`, `_all_reduce_in_place @ ……:637`).
func TestCutPathKeepsFileLineFunction(t *testing.T) {
	t.Parallel()
	unquant := "python/sglang/srt/layers/quantization/unquant.py:131 apply"
	vocab := "forward @ python/sglang/srt/layers/vocab_parallel_embedding.py:487"
	reduce := "_all_reduce_in_place @ python/sglang/srt/distributed/parallel_state.py:637"
	replay := "graph replay @ python/sglang/srt/model_executor/model_runner.py:2003 forward_decode"
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{unquant, 60, unquant},
		{unquant, 30, "…/unquant.py:131 apply"},
		{unquant, 20, "unquant.py:131 apply"},
		{unquant, 18, "unquant.py:131 ap…"},
		{unquant, 16, "unquant.py:131 …"},
		{unquant, 14, "unq…t.py:131 …"},
		{vocab, 43, "forward @ …/vocab_parallel_embedding.py:487"},
		{vocab, 42, "forward @ vocab_parallel_embedding.py:487"},
		{vocab, 37, "fo… @ vocab_parallel_embedding.py:487"},
		{vocab, 35, "… @ vocab_parallel_embedding.py:487"},
		{vocab, 30, "… @ vocab…_embedding.py:487"},
		{reduce, 32, "_all_re… @ parallel_state.py:637"},
		{reduce, 29, "_all… @ parallel_state.py:637"},
		// The words before a trailing function go first.
		{replay, 45, "graph … @ model_runner.py:2003 forward_decode"},
		{replay, 36, "… @ model_runner.py:2003 forward_de…"},
		{"forward @ a/b/x.py:1 (site share 60%)", 30, "for… @ x.py:1 (site share 60%)"},
	} {
		got := cutPath(c.in, c.w)
		if got != c.want {
			t.Errorf("cutPath(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
		if textWidth(got) > c.w {
			t.Errorf("cutPath(%q, %d) = %q is wider", c.in, c.w, got)
		}
	}
	// The least a location column gets: base name and line whole, the
	// function's first 8 columns.
	for in, want := range map[string]int{
		vocab:   len("forward @ vocab_parallel_embedding.py:487"),
		reduce:  len("_all_re… @ parallel_state.py:637") - 2, // "…" is one column, three bytes
		unquant: len("unquant.py:131 apply"),
		replay:  len("… @ model_runner.py:2003 forward…") - 4,
		"a/b/x.py:1 f (site share 60%); c/y.py:2 g (site share 40%)": len("x.py:1 f (site share 60%)"),
	} {
		if got := pathMinWidth(in); got != want {
			t.Errorf("pathMinWidth(%q) = %d, want %d", in, got, want)
		}
	}
	if got := cutList("a/b/x.py:1 f (site share 60%); c/y.py:2 g (site share 40%)", "; ", 35, true); got != "…/x.py:1 f (site share 60%) +1 more" {
		t.Errorf("two locations in 35: %q", got)
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

// TestWrapKeepsFigureWithUnit: a wrap never breaks between a number and
// its unit (issue 34: history's verdict ended a line on "2.9" and began
// the next with "µs)"); other words after a number still break.
func TestWrapKeepsFigureWithUnit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"over threshold 2.9 µs)", 19, "over threshold|  2.9 µs)"},
		{"level (58.9 ms, +2.1 %;", 12, "level|  (58.9 ms,|  +2.1 %;"},
		{"wrote 12 MiB to out", 9, "wrote|  12 MiB|  to out"},
		{"took -3 s then", 8, "took|  -3 s|  then"},
		{"run 2 of 8", 6, "run 2|  of 8"},
		{"h07a ms", 5, "h07a|  ms"},
		{"keep 2.9 µs", 20, "keep 2.9 µs"},
		// a number keeps the short noun it counts, not a word that joins
		{"stored 12 file(s) of 16", 14, "stored|  12 file(s)|  of 16"},
		{"after 3 steps, then 4 more", 12, "after|  3 steps,|  then 4|  more"},
		{"ran 3 configurations", 18, "ran 3|  configurations"}, // too long to bind
	} {
		got := strings.Join(wrapLine(c.in, c.width), "|")
		if got != c.want {
			t.Errorf("wrapLine(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
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

// TestCutParts: a name of `_`-separated parts drops whole parts from its
// middle, never characters, keeping its first part, its tile (if it names
// one) and its last part, then the others from the left, then from the
// right, as they fit (issue 34: `ncclDevKernel_AllR…_RING_LL` at 80
// columns); other text is left to cutMiddle.
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
		{"cutlass_bf16_relu_64x64_64x4_tn", 22, "cutlass…_64x64_64x4_tn"}, // then from the right
		{"cutlass_bf16_relu_64x64_64x4_tn", 18, "cutlass…_64x64…_tn"},
		{"cutlass_bf16_relu_64x64_64x4_tn", 17, ""}, // the three kept parts do not fit
		{"fmha_bf16_64_128_qkv_128_causal", 28, "fmha_bf16_64_128_qkv…_causal"},
		{"fmha_bf16_64_128_qkv_128_causal", 24, "fmha_bf16_64_128…_causal"},
		{"Cijk_Ailk_Bljk_HHS_MT128x128x16", 27, "Cijk_Ailk…_HHS_MT128x128x16"}, // the tile last
		// No tile: the first part and the last.
		{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 32, "ncclDevKernel_AllReduce_Sum…_LL"},
		{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 27, "ncclDevKernel_AllReduce…_LL"},
		{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 24, "ncclDevKernel…_RING_LL"},
		{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 16, ""},
		// A last part every kernel has goes: the name is cut at its end.
		{"vectorized_elementwise_kernel", 23, "vectorized_elementwise…"},
		{"vectorized_elementwise_kernel", 21, "vectorized…"},
		{"_per_token_group_quant_fp8", 20, "_per_token…_fp8"}, // a leading `_` stays with its part
		{"triton_poi_fused__to_copy_add_0", 24, "triton_poi_fused__to…_0"},
		{"rms_norm", 5, ""}, // two parts: nothing to drop
		{"sm100_fp8_gemm_1d1d_impl<…, 7168u, …>", 20, ""}, // not only parts
	} {
		got, ok := cutParts(c.in, c.w)
		checkCut(t, fmt.Sprintf("cutParts(%q, %d)", c.in, c.w), c.w, got, ok, c.want)
	}
}

// checkCut holds what a cut function gave (got, ok) for the call named
// call: "" when it cannot cut (ok false), else want, never wider than w.
func checkCut(t *testing.T, call string, w int, got string, ok bool, want string) {
	t.Helper()
	if !ok {
		got = ""
	}
	if got != want {
		t.Errorf("%s = %q, want %q", call, got, want)
	}
	if ok && textWidth(got) > w {
		t.Errorf("%s = %q is %d wide", call, got, textWidth(got))
	}
}

// TestCutWords: a kernel name without a tile is cut at its words as well
// (issue 34: compare at 80 columns printed `BatchPrefillWithRaggedK…<…>`):
// by whole `_` parts, or, for a CamelCase name, after a whole word, its
// template arguments kept; must keeps the word where two names differ.
func TestCutWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		w    int
		must int
		want string // "" when no cut at words fits
	}{
		{"BatchPrefillWithRaggedKVCacheKernel<…>", 40, -1, "BatchPrefillWithRaggedKVCacheKernel<…>"},
		{"BatchPrefillWithRaggedKVCacheKernel<…>", 27, -1, "BatchPrefillWithRagged…<…>"},
		{"BatchPrefillWithRaggedKVCacheKernel<…>", 24, -1, "BatchPrefillWith…<…>"},
		{"BatchPrefillWithPagedKVCacheKernel<…>", 27, -1, "BatchPrefillWithPagedKV…<…>"}, // KV|Cache
		{"TopKTopPSamplingFromProbKernel<…>", 24, -1, "TopKTopPSamplingFrom…<…>"},
		{"BatchPrefillWithRaggedKVCacheKernel<…>", 24, 16, ""}, // Ragged does not fit
		{"BatchPrefillWithRaggedKVCacheKernel", 10, -1, "Batch…"},
		{"Supercalifragilistic<…>", 12, -1, ""}, // one word
		{"cross_device_reduce_1stage<…>", 24, -1, "cross_device…_1stage<…>"},
		{"sm100_fp8_gemm_1d1d_impl<…, 2112u, 7168u, …>", 32, -1, "sm100_fp8…<…, 2112u, 7168u, …>"},
		{"rotary_embedding_kernel<…>", 23, -1, "rotary_embedding…<…>"},
		{"sm100_fp8_gemm_1d1d_impl<…, 2112u, 7168u, …>", 24, -1, ""}, // the arguments leave no room
		{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 24, -1, "ncclDevKernel…_RING_LL"},
		// Kept where it differs from ncclDevKernel_AllGather_RING_LL
		// (byte 17): the common last part goes first.
		{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 24, 17, "ncclDevKernel_AllReduce…"},
		{"ncclDevKernel_AllGather_RING_LL", 24, 17, "ncclDevKernel_AllGather…"},
		{"Memcpy HtoD (Pinned -> Device)", 20, -1, ""}, // not a name
		{"at::native::vectorized_elementwise_kernel<…>", 24, -1, ""},
	} {
		got, ok := cutWords(c.in, c.w, c.must)
		checkCut(t, fmt.Sprintf("cutWords(%q, %d, %d)", c.in, c.w, c.must), c.w, got, ok, c.want)
	}
}

// TestCutNamesAtWords: a name column cut to 24 columns (80 wide) keeps
// whole words, and two names a cut would make equal keep the word where
// they differ.
func TestCutNamesAtWords(t *testing.T) {
	t.Parallel()
	names := []string{
		"ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
		"ncclDevKernel_AllGather_RING_LL",
		"BatchPrefillWithRaggedKVCacheKernel<…>",
		"cross_device_reduce_1stage<…>",
		"fused_moe_kernel",
	}
	want := []string{
		"ncclDevKernel_AllReduce…",
		"ncclDevKernel_AllGather…",
		"BatchPrefillWith…<…>",
		"cross_device…_1stage<…>",
		"fused_moe_kernel",
	}
	if got := cutNames(names, 24); !slices.Equal(got, want) {
		t.Errorf("cutNames(24) =\n%q\nwant\n%q", got, want)
	}
	// At 32 (120 wide) each keeps more, and no two are equal.
	want = []string{
		"ncclDevKernel_AllReduce_Sum…_LL",
		"ncclDevKernel_AllGather_RING_LL",
		"BatchPrefillWithRaggedKV…<…>",
		"cross_device_reduce_1stage<…>",
		"fused_moe_kernel",
	}
	if got := cutNames(names, 32); !slices.Equal(got, want) {
		t.Errorf("cutNames(32) =\n%q\nwant\n%q", got, want)
	}
}

// TestFitTablePathColumn: a location column gets its file's base name and
// line whole beside the function's head, or goes under the row whole
// (issue 34: the longest-gaps table printed `forward @ …/vocab_….py:487`):
// the gaps table of triage from 153 columns (whole) to 80.
func TestFitTablePathColumn(t *testing.T) {
	t.Parallel()
	site := "forward @ python/sglang/srt/layers/vocab_parallel_embedding.py:487"
	tab := &Table{Columns: []Column{{Name: "Gap", Right: true}, {Name: "Cause", Keep: true}, {Name: "Step", Right: true},
		{Name: "Before", Kernel: true}, {Name: "After", Kernel: true}, {Name: "Site", Cut: CutPath, Detail: 1}},
		Rows: [][]string{{"17.8 µs", "host-bound", "1", "Memcpy HtoD (Pinned -> Device)", "indexSelectLargeIndex<…>", site}}}
	// 7+10+4+30+24 and five gaps of 2: 85 before the location.
	for _, c := range []struct {
		width  int
		cell   string // the location in the row, "" when it went under it
		detail string
	}{
		{153, site, ""},
		{130, "forward @ …/vocab_parallel_embedding.py:487", ""},
		{128, "forward @ …/vocab_parallel_embedding.py:487", ""},
		{126, "forward @ vocab_parallel_embedding.py:487", ""},
		{120, "", "    Site: " + site},
		{80, "", "    Site: " + site},
	} {
		note := 0
		f := fitTable(tab, c.width, &note)
		cell := ""
		if len(f.head) == 6 {
			cell = f.rows[0][5]
		}
		var detail string
		if len(f.details) > 0 {
			detail = strings.Join(f.details[0], "|")
		}
		if cell != c.cell || detail != c.detail {
			t.Errorf("%d: location %q, details %q; want %q, %q", c.width, cell, detail, c.cell, c.detail)
		}
	}
}

func TestCutPhrase(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		w    int
		want string // "" when the first and last words do not fit
	}{
		{"Fused QK RoPE reshape + KV cache write", 40, "Fused QK RoPE reshape + KV cache write"},
		// head words count double against the tail's
		{"Fused QK RoPE reshape + KV cache write", 30, "Fused QK RoPE reshape + KV …"},
		{"Fused QK RoPE reshape + KV cache write", 35, "Fused QK RoPE reshape + KV cache …"},
		{"Fused activation-and-mul (SwiGLU / GeGLU)", 30, "Fused activation-and-mul …"},
		// a tie keeps the end
		{"FlashInfer unified allreduce_fusion", 30, "FlashInfer … allreduce_fusion"},
		{"vLLM-origin DeepSeek min-latency fused QKV-A projection", 40, "vLLM-origin DeepSeek min-latency fused …"},
		// a lone "+" or "/" neither ends the head nor starts the tail
		{"Fused QK RoPE reshape + KV cache write", 24, "Fused QK RoPE reshape …"},
		{"Fused MoE router / top-k / softcapping", 25, "Fused MoE router …"},
		{"Fused MoE router / top-k / softcapping", 26, "Fused MoE router / top-k …"},
		{"Fused logit softcap", 12, "Fused …"},
		{"Supercalifragilistic expialidocious", 12, ""}, // the first word does not fit
	} {
		got, ok := cutPhrase(c.in, c.w)
		checkCut(t, fmt.Sprintf("cutPhrase(%q, %d)", c.in, c.w), c.w, got, ok, c.want)
	}
	// Two phrases that cut to the same text are cut as names are, which
	// keeps them apart.
	cells := []string{"Fused QK RoPE reshape + KV cache write", "Fused QK RoPE reshape + MLA cache write"}
	got := cutPhrases(cells, 30)
	if got[0] == got[1] {
		t.Errorf("cutPhrases(%q, 30) = %q: the two read the same", cells, got)
	}
}
