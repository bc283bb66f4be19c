package catalog

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// These tests read testdata/catalog-facts.md (see factsFile) and check
// the embedded catalog against it, so an entry cannot be lost, renamed or
// have a number mistyped without a failure. The markdown is parsed here
// independently of the catalog code.

// droppedFused lists fused keywords of the facts the catalog deliberately
// leaves out, keyed by fact row number; catalog.yaml says why at the entry.
var droppedFused = map[int][]string{
	2: {"fusedaddrmsnormkernel"}, // the plain FusedAddRMSNorm kernel: a false positive of the earlier tool
}

// narrowedSteps maps a broad quantisation keyword of the facts' split groups
// to the specific kernel vocabulary catalog.yaml uses in its place (the note
// at the top of catalog.yaml says why).
var narrowedSteps = map[string][]string{
	"quant": {"per_token_group_quant", "per_token_quant", "scaled_fp8_quant", "fp8_quant", "quant_fp8", "fp4_quant", "quant_fp4", "int8_quant", "quantize_fp8", "quantize_fp4"},
	"fp8":   {"quant_fp8", "fp8_quant", "cvt_fp8", "to_fp8"},
	"fp4":   {"fp4_quant", "quant_fp4", "cvt_fp16_to_fp4", "to_fp4"},
	"nvfp4": {"nvfp4_quant", "quant_nvfp4"},
	"mxfp":  {"mxfp4_quant", "mxfp8_quant", "quant_mxfp"},
	"mxfp4": {"mxfp4_quant", "quant_mxfp4"},
	// cache-write steps
	"kv_cache": {"store_kvcache", "reshape_and_cache", "kv_cache_write", "update_kv_cache"},
	"paged kv": {"append_paged_kv"},
}

// addedFused lists fused keywords the catalog adds to the facts, keyed by
// fact row number: other frameworks' kernels doing the same fused work.
var addedFused = map[int][]string{
	4: {"act_and_mul"},                // FlashInfer's fused activation kernel, seen bare in CUDA-graph replays
	7: {"applyBiasRopeUpdateKVCache"}, // TensorRT-LLM's fused RoPE + KV cache update
	8: {"applyBiasRopeUpdateKVCache"},
}

// narrowGroup applies narrowedSteps to one split group, in place order,
// without duplicates; groups of entries kept verbatim are left alone.
func narrowGroup(id string, g []string) []string {
	if id == "tokenspeed-mla-attention" || id == "tokenspeed-nvfp4-gemm-swiglu-quant" && slices.Contains(g, "gemm") {
		// Those steps describe the kernel itself (an FP8 attention, an NVFP4 GEMM).
		return g
	}
	var out []string
	for _, k := range g {
		r, ok := narrowedSteps[k]
		if !ok {
			r = []string{k}
		}
		for _, x := range r {
			// A replacement the group already names keeps its own place.
			if !slices.Contains(out, x) && (!ok || !slices.Contains(g, x)) {
				out = append(out, x)
			}
		}
	}
	return out
}

// factsFile is testdata/catalog-facts.md, a copy of the team's catalog
// facts (kept outside the repository): copy it again when they change.
func factsFile(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "catalog-facts.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var backticked = regexp.MustCompile("`([^`]*)`")

func ticks(s string) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

func cells(line string) []string {
	parts := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// section returns the lines from the heading that starts with prefix to the
// next heading of the same or a higher level.
func section(doc, prefix string) []string {
	lines := strings.Split(doc, "\n")
	var out []string
	in := false
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			in = true
			continue
		}
		if in && strings.HasPrefix(l, "## ") {
			break
		}
		if in {
			out = append(out, l)
		}
	}
	return out
}

type factFusion struct {
	row                     int
	name, origin, framework string
	fused                   []string
	groups                  [][]string
	minTP                   int
	modelsAny, modelsNone   []string
	minShare, likelyShare   float64
	priority                int
	subsumes                []string // display names
	sources                 []string
}

var setOf = regexp.MustCompile(`\{([^}]*)\}`)

func parseFactFusions(t *testing.T, doc string) []factFusion {
	t.Helper()
	var out []factFusion
	for _, l := range section(doc, "## A.") {
		c := cells(l)
		if len(c) != 11 {
			continue
		}
		row, err := strconv.Atoi(c[0])
		if err != nil {
			continue // header
		}
		f := factFusion{row: row, name: c[1], origin: c[2], framework: c[3], fused: ticks(c[4]), minTP: 1}
		if c[5] != "-" {
			for _, g := range strings.Split(c[5], " AND ") {
				f.groups = append(f.groups, ticks(g))
			}
		}
		if c[6] != "-" {
			for _, gate := range strings.Split(c[6], ";") {
				gate = strings.TrimSpace(gate)
				var set []string
				if m := setOf.FindStringSubmatch(gate); m != nil {
					for _, s := range strings.Split(m[1], ",") {
						set = append(set, strings.TrimSpace(s))
					}
				}
				switch {
				case gate == "tp_size>=2":
					f.minTP = 2
				case strings.HasPrefix(gate, "model has one of"):
					f.modelsAny = set
				case strings.HasPrefix(gate, "model has none of"):
					f.modelsNone = set
				default:
					t.Fatalf("row %d: gate %q not understood by this test", row, gate)
				}
			}
		}
		shares := strings.Split(c[7], "/")
		f.minShare, _ = strconv.ParseFloat(shares[0], 64)
		f.likelyShare, _ = strconv.ParseFloat(shares[1], 64)
		f.priority, _ = strconv.Atoi(c[8])
		if c[9] != "-" {
			for _, s := range strings.Split(c[9], ",") {
				f.subsumes = append(f.subsumes, strings.TrimSpace(s))
			}
		}
		f.sources = strings.Split(c[10], "<br>")
		out = append(out, f)
	}
	return out
}

func TestCatalogHasEveryFactFusion(t *testing.T) {
	t.Parallel()
	facts := parseFactFusions(t, factsFile(t))
	if len(facts) != 47 {
		t.Fatalf("facts section A has %d rows; the spec says 47", len(facts))
	}
	c := Default()
	if len(c.Fusions) != len(facts) {
		t.Errorf("catalog has %d fusions, facts have %d", len(c.Fusions), len(facts))
	}
	byName := map[string]*Fusion{}
	for i := range c.Fusions {
		byName[c.Fusions[i].Name] = &c.Fusions[i]
	}
	idOf := func(name string) string {
		if f, ok := byName[name]; ok {
			return f.ID
		}
		return "?" + name
	}
	for _, ff := range facts {
		f, ok := byName[ff.name]
		if !ok {
			t.Errorf("fact %d %q: no catalog entry with that name", ff.row, ff.name)
			continue
		}
		where := strconv.Itoa(ff.row) + " " + f.ID
		if f.Framework != ff.framework || f.Origin != ff.origin {
			t.Errorf("%s: framework/origin %s/%s, facts say %s/%s", where, f.Framework, f.Origin, ff.framework, ff.origin)
		}
		wantFused := slices.DeleteFunc(slices.Clone(ff.fused), func(k string) bool {
			return slices.Contains(droppedFused[ff.row], k)
		})
		wantFused = append(wantFused, addedFused[ff.row]...)
		if !slices.Equal(f.Fused, wantFused) {
			t.Errorf("%s: fused %q, facts say %q", where, f.Fused, wantFused)
		}
		// Steps may be reordered to execution order; each group must survive intact.
		groups := make([][]string, len(ff.groups))
		for i, g := range ff.groups {
			groups[i] = narrowGroup(f.ID, g)
		}
		if !sameGroups(f.Chain, groups) {
			t.Errorf("%s: chain %q, facts' groups (narrowed) %q", where, f.Chain, groups)
		}
		if f.MinTP != ff.minTP {
			t.Errorf("%s: min_tp %d, facts say %d", where, f.MinTP, ff.minTP)
		}
		if !slices.Equal(f.ModelsAny, ff.modelsAny) || !slices.Equal(f.ModelsNone, ff.modelsNone) {
			t.Errorf("%s: models %q / %q, facts say %q / %q", where, f.ModelsAny, f.ModelsNone, ff.modelsAny, ff.modelsNone)
		}
		if f.MinShare != ff.minShare || f.LikelyShare != ff.likelyShare {
			t.Errorf("%s: shares %v/%v, facts say %v/%v", where, f.MinShare, f.LikelyShare, ff.minShare, ff.likelyShare)
		}
		if f.Priority != ff.priority {
			t.Errorf("%s: priority %d, facts say %d", where, f.Priority, ff.priority)
		}
		var wantSub []string
		for _, n := range ff.subsumes {
			wantSub = append(wantSub, idOf(n))
		}
		if !slices.Equal(f.Subsumes, wantSub) {
			t.Errorf("%s: subsumes %q, facts say %q", where, f.Subsumes, wantSub)
		}
		if !slices.Equal(f.Sources, ff.sources) {
			t.Errorf("%s: sources %q, facts say %q", where, f.Sources, ff.sources)
		}
	}
}

func sameGroups(chain, groups [][]string) bool {
	key := func(gs [][]string) []string {
		var out []string
		for _, g := range gs {
			out = append(out, strings.Join(g, "\x00"))
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(chain), key(groups))
}

type factOverlap struct {
	heading, name     string
	framework, origin string
	keywords          []string
	prose             bool // the keyword cell is a description, not only names
	sources           []string
}

func parseFactOverlaps(t *testing.T, doc string) []factOverlap {
	t.Helper()
	var out []factOverlap
	heading := ""
	for _, l := range section(doc, "## B.") {
		if strings.HasPrefix(l, "### ") {
			heading = strings.TrimPrefix(l, "### ")
			continue
		}
		c := cells(l)
		if len(c) != 4 || c[0] == "Pattern" || strings.HasPrefix(c[0], "---") {
			continue
		}
		o := factOverlap{heading: heading, name: strings.ReplaceAll(c[0], "`", ""), keywords: ticks(c[1]), sources: ticks(c[2])}
		rest := backticked.ReplaceAllString(c[1], "")
		rest = strings.NewReplacer("<br>", "", ",", "", " ", "").Replace(rest)
		o.prose = rest != ""
		// The heading says whose path it is and whether it is still a PR.
		switch {
		case strings.HasPrefix(heading, "FlashInfer"):
			o.framework = "flashinfer"
		case strings.HasPrefix(heading, "TensorRT-LLM"):
			o.framework = "trtllm"
		case strings.HasPrefix(heading, "TokenSpeed"):
			o.framework = "tokenspeed"
		case strings.HasPrefix(heading, "vLLM"):
			o.framework = "vllm"
		default:
			o.framework = "sglang"
		}
		switch {
		case strings.Contains(heading, "in-flight"):
			o.origin = "inflight"
		case o.framework == "sglang":
			o.origin = "mainline"
		default:
			o.origin = "upstream"
		}
		out = append(out, o)
	}
	return out
}

func TestCatalogHasEveryFactOverlap(t *testing.T) {
	t.Parallel()
	facts := parseFactOverlaps(t, factsFile(t))
	if len(facts) < 25 {
		t.Fatalf("parsed only %d overlap rows from section B; the parser is broken", len(facts))
	}
	c := Default()
	if len(c.Overlaps) != len(facts) {
		t.Errorf("catalog has %d overlaps, facts section B has %d rows", len(c.Overlaps), len(facts))
	}
	byName := map[string]*Overlap{}
	for i := range c.Overlaps {
		byName[c.Overlaps[i].Name] = &c.Overlaps[i]
	}
	for _, fo := range facts {
		o, ok := byName[fo.name]
		if !ok {
			t.Errorf("%s / %q: no catalog overlap with that name", fo.heading, fo.name)
			continue
		}
		if o.Framework != fo.framework || o.Origin != fo.origin {
			t.Errorf("%s: framework/origin %s/%s, section %q implies %s/%s", o.ID, o.Framework, o.Origin, fo.heading, fo.framework, fo.origin)
		}
		if !fo.prose {
			if !slices.Equal(o.Keywords, fo.keywords) {
				t.Errorf("%s: keywords %q, facts say %q", o.ID, o.Keywords, fo.keywords)
			}
		} else {
			// A described row: every name it does give must be covered by a
			// keyword contained in it.
			for _, k := range fo.keywords {
				if !slices.ContainsFunc(o.Keywords, func(ours string) bool { return strings.Contains(k, ours) }) {
					t.Errorf("%s: facts name %q; no keyword covers it (have %q)", o.ID, k, o.Keywords)
				}
			}
		}
		for _, s := range fo.sources {
			if !slices.ContainsFunc(o.Sources, func(ours string) bool { return ours == s || strings.HasSuffix(ours, "/"+s) }) {
				t.Errorf("%s: facts cite %q; missing from sources %q", o.ID, s, o.Sources)
			}
		}
	}
}
