package kernelname

import (
	"regexp"
	"strings"
	"sync"
)

// Kernel libraries that generate their kernels' names spell out every
// parameter of the kernel in one identifier of 60 to 120 characters:
//
//	sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas
//	cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8
//	cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnn_align8_warpspecialized_cooperative_epi_tma
//	fmha_v2_flash_attention_bf16_64_128_S_qkv_128_causal_sm90_kernel_nl_tiled
//	ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_nn
//	Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_GRVW8_GSU1_…_WG32_8_1 (ROCm's Tensile, 200+)
//
// Cut to a table column they all read `sm90_xmma_gemm_…`. Their display
// name (issue 34 item 1) keeps a short mark of the library and the parts
// that tell two of its kernels apart, in the name's own order and
// spelling: the data type, the tile, the layout, an epilogue
// (`xmma_bf16_tn_128x128x64`, `cutlass_bf16_relu_64x64_64x4_tn`,
// `cutlass3x_bf16_128x256x64_tnn`, `fmha_bf16_64_128_qkv_128_causal`,
// `ampere_bf16_128x128_32x5_nn`, `Cijk_Ailk_Bljk_HHS_MT128x128x32`). What the library's kernels share, or
// what rarely differs within one trace (the GPU architecture, warp and
// cluster shapes, stages, alignment, schedule, the `_kernel__5x_cublas`
// tail), is left out of the display name but kept as a segment, so that
// Labels shows it where two kernels of one table differ only there
// (`xmma_bf16_tn_128x128x64_segment_k_on`).

// seg is one part of a library kernel name: raw as written in it, shown as
// the display name shows it ("" when it leaves the part out). The raw
// parts joined by `_` are the name.
type seg struct{ raw, shown string }

// dtypeAlt are the data type spellings of the libraries' names, longest
// first where one is a prefix of another.
const dtypeAlt = `bf16|tf32|fp16|fp32|fp64|fp8|e4m3|e5m2|e2m1|e3m2|e2m3|ue8m0|ue4m3|f16|f32|f64|f8|f4|s4|s8|s16|s32|u4|u8|u16|u32|i4|i8|i32|c16|c32|c64|z64|int8|int4|void`

// The patterns below are compiled when first used (lazyRegexp): most names
// are no library's and reach two of them, and compiling all of them in the
// package's init was 2-3 ms of every command's start, ingest or report
// (perf, issue 38).
var (
	dtypeRe   = lazyRegexp(`^(?:` + dtypeAlt + `)$`)
	dtypesRe  = lazyRegexp(`^(?:` + dtypeAlt + `)+$`)
	dtypeHead = lazyRegexp(`^(?:` + dtypeAlt + `)`)
	// instrRe is an MMA instruction or operation spelling: s16816gemm,
	// sgemm, z884gemm, s64x128x16gemm, tf32gemm, s64x256x64spgemm.
	instrRe   = lazyRegexp(`^[a-z]*[0-9]*(?:x[0-9]+)*[a-z0-9]*gemm$`)
	tile2Re   = lazyRegexp(`^[0-9]+x[0-9]+$`)
	tile3Re   = lazyRegexp(`^[0-9]+x[0-9]+x[0-9]+$`)
	layoutRe  = lazyRegexp(`^[nt]{2,3}$`)
	alignRe   = lazyRegexp(`^align[a-z]?[0-9]+$`)
	smRe      = lazyRegexp(`^sm[0-9]+[a-z]?$`)
	digitsRe  = lazyRegexp(`^[0-9]+$`)
	legacyRe  = lazyRegexp(`^(?:trt_)?(?:maxwell|pascal|volta|turing|ampere|hopper)_`)
	versionRe = lazyRegexp(`^v[0-9]+$`)
	// Tensile's problem type: the indices of C, A and B (Cijk, Ailk,
	// Bjlk), the data types (HHS, BBS, F8B8BS, SB); its macro tile
	// MT128x128x32.
	cIdxRe    = lazyRegexp(`^C[a-z]{2,}$`)
	aIdxRe    = lazyRegexp(`^A[a-z]{2,}$`)
	bIdxRe    = lazyRegexp(`^B[a-z]{2,}$`)
	tTypesRe  = lazyRegexp(`^[A-Z][A-Z0-9]*$`)
	macroTile = lazyRegexp(`^MT[0-9]+x[0-9]+x[0-9]+$`)
)

// librarySegs takes a generated library kernel name apart (see above);
// nil when name is not one it knows, so that the name stays as written.
func librarySegs(name string) []seg {
	if !isIdentifier(name) {
		return nil
	}
	toks := strings.Split(name, "_")
	var out []seg
	switch {
	case len(toks) > 2 && smRe.MatchString(toks[0]) && toks[1] == "xmma":
		out = xmmaSegs(toks)
	case toks[0] == "cutlass3x":
		out = cutlass3Segs(toks)
	case toks[0] == "cutlass":
		out = cutlass2Segs(toks, false)
	case legacyRe.MatchString(name):
		out = cutlass2Segs(toks, true)
	case len(toks) > 2 && toks[0] == "fmha" && toks[1] == "v2":
		out = fmhaSegs(toks)
	case strings.Contains(name, "_MT"):
		out = tensileSegs(toks)
	}
	if out == nil {
		return nil
	}
	// Never a display name that loses the whole name.
	var kept int
	for _, s := range out {
		if s.shown != "" {
			kept++
		}
	}
	if kept < 2 {
		return nil
	}
	return out
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return true
}

// splitTypes splits concatenated data types (`bf16bf16` -> bf16, bf16);
// nil when s is not made of them.
func splitTypes(s string) []string {
	if !dtypesRe.MatchString(s) {
		return nil
	}
	var out []string
	for s != "" {
		t := dtypeHead.FindString(s)
		if t == "" {
			return nil
		}
		out = append(out, t)
		s = s[len(t):]
	}
	return out
}

// phrases are runs of tokens that are one part of a name.
var phrases = [][]string{
	{"segment", "k", "on"}, {"segment", "k", "off"},
	{"flash", "attention"},
	{"q", "paged", "kv"}, {"q", "contiguous", "kv"}, {"q", "k", "v"}, {"q", "kv"},
	{"sliding", "or", "chunked", "causal"}, {"custom", "mask"},
	{"tma", "ws"}, {"epi", "tma"}, {"epi", "nosmem"}, {"fp8", "fastaccum"},
}

// mergePhrases joins the tokens of each phrase into one, and everything
// from a `kernel` token on (`kernel__5x_cublas`, `kernel_nl_tiled`).
func mergePhrases(toks []string) []string {
	var out []string
	for i := 0; i < len(toks); {
		if toks[i] == "kernel" {
			out = append(out, strings.Join(toks[i:], "_"))
			break
		}
		n := 1
		for _, p := range phrases {
			if i+len(p) <= len(toks) && equalTokens(toks[i:i+len(p)], p) {
				n = len(p)
				break
			}
		}
		out = append(out, strings.Join(toks[i:i+n], "_"))
		i += n
	}
	return out
}

func equalTokens(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// xmmaSegs: cuBLAS's `sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize…`.
// Shown: xmma, the operation unless it is a plain gemm (cuDNN's fprop,
// dgrad, wgrad), the MMA's input type (the first of the second type group:
// bf16, tf32, e4m3), the operands' layout and the tile.
func xmmaSegs(toks []string) []seg {
	toks = mergePhrases(toks)
	out := []seg{{toks[0], ""}, {"xmma", "xmma"}}
	i := 2
	for first := true; i < len(toks) && splitTypes(toks[i]) == nil; i++ {
		shown := ""
		if first && toks[i] != "gemm" {
			shown = toks[i]
		}
		first = false
		out = append(out, seg{toks[i], shown})
	}
	var groups []int
	for ; i < len(toks) && splitTypes(toks[i]) != nil; i++ {
		groups = append(groups, len(out))
		out = append(out, seg{toks[i], ""})
	}
	if len(groups) == 0 {
		return nil
	}
	g := groups[min(1, len(groups)-1)]
	out[g].shown = splitTypes(out[g].raw)[0]
	for first := true; i < len(toks) && !strings.HasPrefix(toks[i], "tilesize"); i++ {
		shown := ""
		if first {
			shown = toks[i]
		}
		first = false
		out = append(out, seg{toks[i], shown})
	}
	if i == len(toks) {
		return nil
	}
	tile := strings.TrimPrefix(toks[i], "tilesize")
	if tile == "" {
		return nil
	}
	out = append(out, seg{toks[i], tile})
	for _, t := range toks[i+1:] {
		out = append(out, seg{t, ""})
	}
	return out
}

// cutlass2Segs: CUTLASS 2's `cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8`
// and, legacy, cuBLAS's `ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_nn`.
// Shown: the library (cutlass; the architecture word of a legacy name),
// simt or wmma, the data types (a repeated one once), the instruction
// only when no data type is named, the epilogue and other words, the
// tile, the layout. Left out: the architecture number, tensorop,
// alignment, and for legacy names the load width (ldg8), f2f, `stages`
// and the version (v1).
func cutlass2Segs(toks []string, legacy bool) []seg {
	toks = mergePhrases(toks)
	hasType, hasTile, hasLayout := false, false, false
	for _, t := range toks {
		hasType = hasType || dtypeRe.MatchString(t)
		hasTile = hasTile || tile2Re.MatchString(t)
		hasLayout = hasLayout || layoutRe.MatchString(t)
	}
	if !hasTile || !hasLayout {
		return nil
	}
	out := make([]seg, 0, len(toks))
	lastType := ""
	for i, t := range toks {
		shown := t
		switch {
		case i == 0:
		case digitsRe.MatchString(t), t == "tensorop", alignRe.MatchString(t):
			shown = ""
		case legacy && (strings.HasPrefix(t, "ldg") || t == "f2f" || t == "stages" || versionRe.MatchString(t)):
			shown = ""
		case dtypeRe.MatchString(t):
			if t == lastType {
				shown = ""
			}
			lastType = t
		case instrRe.MatchString(t) && hasType:
			shown = ""
		}
		out = append(out, seg{t, shown})
	}
	return out
}

// cutlass3Segs: CUTLASS 3's `cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnn_align8_warpspecialized_cooperative_epi_tma`.
// Shown: cutlass3x, a kind other than tensorop (sptensorop as sp, simt), the A
// type (and B's when it differs; the MMA's when the instruction names it,
// tf32gemm), a mixed-type mode (cvt, scl), the tile,
// the layout. Left out: the architecture, the instruction, the
// accumulator, C and D types, the cluster shape, the stage count, the
// alignment and the schedule after it.
func cutlass3Segs(toks []string) []seg {
	toks = mergePhrases(toks)
	// An instruction that names the type the MMA consumes (`tf32gemm`:
	// f32 operands rounded to tf32) shows that type instead of A's and B's.
	mma := ""
	for _, t := range toks[1:] {
		if instrRe.MatchString(t) && dtypeRe.MatchString(strings.TrimSuffix(t, "gemm")) {
			mma = t
		}
	}
	out := make([]seg, 0, len(toks))
	types, tiles := 0, 0
	afterAlign, hasLayout := false, false
	for i, t := range toks {
		shown := t
		switch {
		case i == 0:
		case afterAlign:
			shown = ""
		case t == mma:
			shown = strings.TrimSuffix(t, "gemm")
		case t == "sptensorop":
			shown = "sp" // sparse, as in its instruction (spgemm)
		case smRe.MatchString(t), t == "tensorop", digitsRe.MatchString(t), instrRe.MatchString(t):
			shown = ""
		case alignRe.MatchString(t):
			shown, afterAlign = "", true
		case dtypeRe.MatchString(t):
			types++
			if mma != "" || types > 2 || types == 2 && t == out[len(out)-1].raw {
				shown = ""
			}
		case tile3Re.MatchString(t):
			tiles++
			if tiles > 1 {
				shown = ""
			}
		case layoutRe.MatchString(t):
			hasLayout = true
		}
		out = append(out, seg{t, shown})
	}
	if tiles == 0 || !hasLayout || types == 0 {
		return nil
	}
	return out
}

// fmhaSegs: TensorRT-LLM's `fmha_v2_flash_attention_bf16_64_128_S_qkv_128_causal_sm90_kernel_nl_tiled`.
// Shown: fmha, the data type, the tile (`64_128`), the input layout
// (qkv, q_kv, q_paged_kv), the head size, the mask and other words. Left
// out: v2, flash_attention, the accumulator and output types, `S`, the
// architecture, tma_ws, and the kernel variant (`kernel_nl_tiled`).
func fmhaSegs(toks []string) []seg {
	toks = mergePhrases(toks)
	out := []seg{{"fmha", "fmha"}, {"v2", ""}}
	types := 0
	for _, t := range toks[2:] {
		shown := t
		switch {
		case t == "flash_attention", t == "S", t == "tma_ws", smRe.MatchString(t), strings.HasPrefix(t, "kernel"):
			shown = ""
		case dtypeRe.MatchString(t):
			types++
			if types > 1 || out[len(out)-1].raw == "output" {
				shown = ""
			}
		case t == "output":
			shown = ""
		}
		out = append(out, seg{t, shown})
	}
	if types == 0 {
		return nil
	}
	return out
}

// tensileSegs: ROCm's Tensile (rocBLAS, hipBLASLt) GEMM names,
// `Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_…_WG32_8_1`,
// often 200 characters: the problem type up to the macro tile (MT), then
// every tuning parameter of the solution. Shown: Cijk (the mark of every
// Tensile GEMM), the layout of A and B (Ailk_Bljk: A not transposed, B
// not transposed), the data types (HHS: half in and out, single
// compute) and the macro tile. Left out: a `Custom…` prefix of hipBLASLt's
// hand-written kernels, the flags (BH, on nearly every kernel), the
// epilogue and argument features (Bias_HA_S_SAV_UserArgs, which one
// hipBLASLt build puts on all its kernels) and everything after the
// tile (the matrix instruction MI…, stream-K, split, load widths, ISA,
// workgroup), so that the tile ends within 32 characters. A number
// after an underscore belongs to the parameter before it (WG32_8_1,
// TT4_64), as it does after the tile (`MT…_MI16x16x1_0`).
func tensileSegs(toks []string) []seg {
	var out []seg
	i := 0
	for i < len(toks) && strings.HasPrefix(toks[i], "Custom") {
		out = append(out, seg{toks[i], ""})
		i++
	}
	if i+3 >= len(toks) || !cIdxRe.MatchString(toks[i]) || !aIdxRe.MatchString(toks[i+1]) ||
		!bIdxRe.MatchString(toks[i+2]) || !tTypesRe.MatchString(toks[i+3]) {
		return nil
	}
	for _, t := range toks[i : i+4] {
		out = append(out, seg{t, t})
	}
	i += 4
	// The flags and features before the tile are one part, so that
	// Labels shows them whole where two kernels differ there
	// (`BH_Bias_HA_S_SAV_UserArgs` beside `BH`), never one letter of them.
	j := i
	for j < len(toks) && !macroTile.MatchString(toks[j]) {
		j++
	}
	if j == len(toks) {
		return nil
	}
	if j > i {
		out = append(out, seg{strings.Join(toks[i:j], "_"), ""})
	}
	out = append(out, seg{toks[j], toks[j]})
	for _, t := range toks[j+1:] {
		if digitsRe.MatchString(t) {
			out[len(out)-1].raw += "_" + t
			continue
		}
		out = append(out, seg{t, ""})
	}
	return out
}

// libDisplay is the display name of a library name's segments.
func libDisplay(segs []seg) string {
	var parts []string
	for _, s := range segs {
		if s.shown != "" {
			parts = append(parts, s.shown)
		}
	}
	return strings.Join(parts, "_")
}

// distinguishLib labels library names of one display name (at least two,
// all different): the display name with, in place and as written, the
// parts left out of it at the first positions where the names differ
// (when they have as many parts), else the shortest part only that name
// has, names before numbers; nil when the names are not all library
// names, or when nothing tells one apart (then Labels shows it whole).
func distinguishLib(ps []Parts) []string {
	ls := make([][]leaf, len(ps))
	same := true
	for i, p := range ps {
		if p.lib == nil {
			return nil
		}
		for _, s := range p.lib {
			ls[i] = append(ls[i], leaf{text: s.raw})
		}
		same = same && len(ls[i]) == len(ls[0])
	}
	out := make([]string, len(ps))
	if same {
		if chosen := positions(ls); chosen != nil {
			for i, p := range ps {
				out[i] = libLabel(p.lib, chosen)
			}
			return out
		}
	}
	for i, p := range ps {
		own := ownLeaf(ls, i)
		if own < 0 {
			return nil
		}
		out[i] = libLabel(p.lib, map[int]bool{own: true})
	}
	return out
}

// libLabel is the display name of segs with the chosen parts shown as
// written.
func libLabel(segs []seg, chosen map[int]bool) string {
	var parts []string
	for k, s := range segs {
		switch {
		case chosen[k]:
			parts = append(parts, s.raw)
		case s.shown != "":
			parts = append(parts, s.shown)
		}
	}
	return strings.Join(parts, "_")
}

// lazyRe is a regular expression compiled on its first use.
type lazyRe struct{ re func() *regexp.Regexp }

func lazyRegexp(pattern string) lazyRe {
	return lazyRe{re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })}
}

func (l lazyRe) MatchString(s string) bool  { return l.re().MatchString(s) }
func (l lazyRe) FindString(s string) string { return l.re().FindString(s) }
