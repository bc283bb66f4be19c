package queries

import (
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
)

// Kernels named after the test catalogs' keywords.
var (
	kAlpha = fkn("alpha_kernel", 4000)
	kBeta  = fkn("beta_kernel", 3000)
	kGamma = fkn("gamma_kernel", 2000)
	kDelta = fkn("delta_kernel", 1000)
	kPad   = fkn("pad_kernel", 10000)
)

// ruleFX is a warehouse with a test catalog and one SGLang run.
func ruleFX(t *testing.T, fusions ...catalog.Fusion) (*fusionFX, int64, int64) {
	f := newFusionFX(t, testCatalog(fusions))
	run := f.run("sglang", "test/model-7b", 1)
	return f, run, f.traceOf(run, 0, 0)
}

// ruleFX is ruleFX for the case t of the test that made f.
func (f *fusionFX) ruleFX(t *testing.T, fusions ...catalog.Fusion) (*fusionFX, int64, int64) {
	c := f.forCase(t, testCatalog(fusions))
	run := c.run("sglang", "test/model-7b", 1)
	return c, run, c.traceOf(run, 0, 0)
}

// caseEntries is case i's catalog entries for a test whose cases share one
// catalog and one fusion_matches statement (matchesOf): each id (and
// each id an entry subsumes) gets the suffix -c<i>, and models_any the
// model of the case's run (caseRun), so that no entry applies on another
// case's run: each run's rows are those a catalog of its case's entries
// alone gives (entries keep their order). The cases' entries must have
// no models gate of their own.
func caseEntries(i int, entries ...catalog.Fusion) []catalog.Fusion {
	out := make([]catalog.Fusion, len(entries))
	for j, e := range entries {
		if len(e.ModelsAny) > 0 || len(e.ModelsNone) > 0 {
			panic("caseEntries: an entry with a models gate of its own")
		}
		e.ID += fmt.Sprintf("-c%d", i)
		e.Subsumes = slices.Clone(e.Subsumes)
		for k := range e.Subsumes {
			e.Subsumes[k] += fmt.Sprintf("-c%d", i)
		}
		e.ModelsAny = []string{fmt.Sprintf("/case%d-", i)}
		out[j] = e
	}
	return out
}

// caseRun adds case i's run (SGLang, TP 1, the model caseEntries gates
// on) and its trace of rank 0.
func (f *fusionFX) caseRun(i int) (run, trace int64) {
	f.t.Helper()
	run = f.run("sglang", fmt.Sprintf("test/case%d-7b", i), 1)
	return run, f.traceOf(run, 0, 0)
}

// caseRows is case i's rows with the ids caseEntries gave back as written;
// a row of another case's entry keeps its suffix.
func caseRows(rows []FusionMatchesRow, i int) []FusionMatchesRow {
	out := slices.Clone(rows)
	for j := range out {
		out[j].ID = strings.TrimSuffix(out[j].ID, fmt.Sprintf("-c%d", i))
	}
	return out
}

// TestFusionChainRules checks adjacency, gaps, order, streams and the
// one-occurrence-per-kernel rule on a two-step chain alpha -> beta
// (max_between 2, max_gap 50 us).
func TestFusionChainRules(t *testing.T) {
	t.Parallel()
	share := sharedFusionFX(t)
	ab := fDur(kAlpha, kBeta)
	f := share.forCase(t, testCatalog([]catalog.Fusion{testFusion("t-ab", []string{"alpha"}, []string{"beta"})}))
	type chainCase struct {
		name    string
		run     int64
		occ     int
		related int64
	}
	var cases []chainCase
	for _, c := range []struct {
		name    string
		seq     []fk // nil: the streams, stages and traces case
		occ     int
		related int64
	}{
		{"adjacent", []fk{kAlpha, kBeta}, 1, ab},
		{"one between", []fk{kAlpha, kPad, kBeta}, 1, ab},
		{"two between", []fk{kAlpha, kPad, kPad, kBeta}, 1, ab},
		{"three between", []fk{kAlpha, kPad, kPad, kPad, kBeta}, 0, 0},
		// the second alpha is within reach, the first is not
		{"second alpha within reach", []fk{kAlpha, kAlpha, kPad, kPad, kBeta}, 1, ab},
		{"gap exactly 50 us", []fk{kAlpha, kBeta.after(50_000)}, 1, ab},
		{"gap 50 us + 1 ns", []fk{kAlpha, kBeta.after(50_001)}, 0, 0},
		// the gap is measured from the end of the previous step, across
		// the kernels in between
		{"gap spread over kernels between", []fk{kAlpha, kPad.after(30_000), kBeta.after(30_000)}, 0, 0},
		// PDL: the next step starts before the previous ends (negative gap)
		{"overlapping on the stream", []fk{kAlpha, kBeta.after(-1000)}, 1, ab},
		{"wrong order", []fk{kBeta, kAlpha}, 0, 0},
		// one kernel per occurrence; the tightest candidate wins
		{"two alphas, one beta", []fk{kAlpha, kAlpha.after(500), kBeta}, 1, ab},
		{"one alpha, two betas", []fk{kAlpha, kBeta, kBeta}, 1, ab},
		{"alternating", []fk{kAlpha, kBeta, kAlpha, kBeta, kAlpha, kBeta}, 3, 3 * ab},
		// alpha(4 us) alpha(5 us) beta: the second alpha sits next to beta
		{"tightest candidate is the one taken", []fk{kAlpha, fkn("alpha_kernel_long", 5000), kBeta}, 1, 5000 + kBeta.dur},
		{"streams, stages, devices and traces do not chain", nil, 0, 0},
	} {
		// each case a run of its own, all asked at once (matchesOf)
		run := f.run("sglang", "test/model-7b", 1)
		tr := f.traceOf(run, 0, 0)
		cases = append(cases, chainCase{c.name, run, c.occ, c.related})
		if c.seq != nil {
			f.seq(tr, "decode", 7, 0, c.seq...)
			continue
		}
		end := f.seq(tr, "decode", 7, 0, kAlpha)
		f.seq(tr, "decode", 8, end+100, kBeta)
		end = f.seq(tr, "prefill", 7, end+1_000_000, kAlpha)
		f.seq(tr, "decode", 7, end+100, kBeta)
		tr2 := f.traceOf(run, 0, 0)
		f.seq(tr2, "decode", 7, end+200, kBeta)
	}
	runs := make([]int64, len(cases))
	for i, c := range cases {
		runs[i] = c.run
	}
	got := f.matchesOf(runs...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []string
			if c.occ > 0 {
				want = append(want, fLine("decode", "t-ab", FusionOpportunity, f.conf(c.run, "decode", c.related, c.occ, testLikely), c.occ, c.related))
			}
			wantFusions(t, got[c.run], want...)
		})
	}

	t.Run("a fused kernel cannot fill a step", func(t *testing.T) {
		// alpha_fused_kernel contains the step keyword `alpha` but also the
		// fused keyword: on another framework's trace the entry says
		// nothing for the group, and the kernel never forms a chain
		e := testFusion("t-ab", []string{"alpha"}, []string{"beta"})
		e.Fused = []string{"alpha_fused"}
		f := share.forCase(t, testCatalog([]catalog.Fusion{e}))
		run := f.run("vllm", "test/model-7b", 1)
		tr := f.traceOf(run, 0, 0)
		f.seq(tr, "decode", 7, 0, fkn("alpha_fused_kernel", 5000), kBeta)
		f.seq(tr, "prefill", 7, 1_000_000, kAlpha, kBeta)
		wantFusions(t, f.matches(run), fLine("prefill", "t-ab", FusionElsewhere, "confirmed", 1, fDur(kAlpha, kBeta)))
	})

	t.Run("a fused kernel silences its own trace, stage and device only", func(t *testing.T) {
		// decode on device 0 of the first trace runs the fused path and a
		// split chain, which says nothing; the same chain on device 1 and
		// on the run's other trace is an opportunity
		e := testFusion("t-ab", []string{"alpha"}, []string{"beta"})
		e.Fused = []string{"alpha_fused"}
		f, run, tr := share.ruleFX(t, e)
		f.seq(tr, "decode", 7, 0, fkn("alpha_fused_kernel", 5000), kAlpha, kBeta)
		f.seq(tr, "decode", 7, 0, kAlpha.on(1), kBeta.on(1))
		f.seq(f.traceOf(run, 1, 1), "decode", 7, 0, kAlpha, kBeta)
		ab := fDur(kAlpha, kBeta)
		wantFusions(t, f.matches(run),
			fLine("decode", "t-ab", FusionOpportunity, f.conf(run, "decode", 2*ab, 2, testLikely), 2, 2*ab),
			fLine("decode", "t-ab", FusionAlreadyFused, f.conf(run, "decode", 5000, 1, testLikely), 1, 5000))
	})
}

// TestFusionUnorderedRules checks unordered chains, including kernels that
// can fill more than one step.
func TestFusionUnorderedRules(t *testing.T) {
	t.Parallel()
	share := sharedFusionFX(t)
	gate := fkn("gate_kernel", 1000)
	gateRes := fkn("gate_residual_kernel", 2000)
	cases := []struct {
		name    string
		entry   catalog.Fusion
		seq     []fk
		occ     int
		related int64
	}{
		{"either order", unordered(testFusion("t-u", []string{"alpha"}, []string{"beta"})),
			[]fk{kBeta, kAlpha, kPad, kAlpha, kBeta}, 2, 2 * fDur(kAlpha, kBeta)},
		{"three steps any order", unordered(testFusion("t-u", []string{"alpha"}, []string{"beta"}, []string{"gamma"})),
			[]fk{kGamma, kAlpha, kBeta, kPad, kPad, kPad, kBeta, kGamma, kAlpha}, 2, 2 * fDur(kAlpha, kBeta, kGamma)},
		// gate_residual can fill step 1 or step 2; only putting it on step 2
		// completes the chain
		{"one kernel, two possible steps", unordered(testFusion("t-u", []string{"gate"}, []string{"residual"}, []string{"gate"})),
			[]fk{gateRes, gate, gate}, 1, fDur(gateRes, gate, gate)},
		// six kernels each matching every step: two disjoint occurrences
		{"every kernel matches every step", unordered(testFusion("t-u", []string{"gate"}, []string{"gate"}, []string{"gate"})),
			fRepeat(6, gate), 2, 6 * gate.dur},
		{"ordered entry with a shared keyword", testFusion("t-u", []string{"gate"}, []string{"gate"}),
			fRepeat(5, gate), 2, 4 * gate.dur},
		{"one step", testFusion("t-u", []string{"alpha"}),
			[]fk{kAlpha, kPad, kAlpha, kAlpha}, 3, 3 * kAlpha.dur},
	}
	// each case a run of its own and its entry gated to it (caseEntries),
	// all asked at once (matchesOf)
	var entries []catalog.Fusion
	for i, c := range cases {
		entries = append(entries, caseEntries(i, c.entry)...)
	}
	f := share.forCase(t, testCatalog(entries))
	runs := make([]int64, len(cases))
	for i, c := range cases {
		var tr int64
		runs[i], tr = f.caseRun(i)
		f.seq(tr, "decode", 7, 0, c.seq...)
	}
	got := f.matchesOf(runs...)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantFusions(t, caseRows(got[runs[i]], i), fLine("decode", "t-u", FusionOpportunity, f.conf(runs[i], "decode", c.related, c.occ, testLikely), c.occ, c.related))
		})
	}
}

func unordered(e catalog.Fusion) catalog.Fusion { e.Ordered = false; return e }

// TestFusionConflicts checks how conflicts resolve: priority, then chain
// steps, then related time, then catalog order decide which entry keeps
// contested kernels; subsumed entries are hidden; rows hidden by the report's
// min share still claim.
func TestFusionConflicts(t *testing.T) {
	t.Parallel()
	share := sharedFusionFX(t)
	with := func(e catalog.Fusion, mod func(*catalog.Fusion)) catalog.Fusion { mod(&e); return e }
	ab := testFusion("t-ab", []string{"alpha"}, []string{"beta"})
	bg := testFusion("t-bg", []string{"beta"}, []string{"gamma"})
	abg := testFusion("t-abg", []string{"alpha"}, []string{"beta"}, []string{"gamma"})
	gd := testFusion("t-gd", []string{"gamma"}, []string{"delta"})
	layer := []fk{kAlpha, kBeta, kGamma, kDelta, kPad}
	opp := func(id string, related int64) string {
		return fLine("decode", id, FusionOpportunity, "confirmed", 4, 4*related)
	}
	cases := []struct {
		name    string
		entries []catalog.Fusion
		minPct  float64
		want    []string
	}{
		// equal priority and steps: more related time first (beta+gamma 5 us
		// < alpha+beta 7 us), so t-ab claims beta and t-bg is dropped
		{"related time", []catalog.Fusion{bg, ab}, 0, []string{opp("t-ab", fDur(kAlpha, kBeta))}},
		{"priority beats time", []catalog.Fusion{ab, with(bg, func(e *catalog.Fusion) { e.Priority = 10 })}, 0,
			[]string{opp("t-bg", fDur(kBeta, kGamma))}},
		{"steps beat time", []catalog.Fusion{ab, abg}, 0, []string{opp("t-abg", fDur(kAlpha, kBeta, kGamma))}},
		// same priority, steps and time: the catalog's order
		{"catalog order", []catalog.Fusion{with(ab, func(e *catalog.Fusion) { e.ID = "t-second" }),
			with(ab, func(e *catalog.Fusion) { e.ID = "t-first" })}, 0,
			[]string{opp("t-second", fDur(kAlpha, kBeta))}},
		// disjoint kernels both stay, ordered by priority then time
		{"no conflict", []catalog.Fusion{ab, gd}, 0,
			[]string{opp("t-ab", fDur(kAlpha, kBeta)), opp("t-gd", fDur(kGamma, kDelta))}},
		// subsumes hides an entry even with disjoint kernels
		{"subsumes", []catalog.Fusion{with(ab, func(e *catalog.Fusion) { e.Subsumes = []string{"t-gd"} }), gd}, 0,
			[]string{opp("t-ab", fDur(kAlpha, kBeta))}},
		// ... also when the subsumer comes later in conflict order
		{"subsumed by a lower priority entry", []catalog.Fusion{
			with(ab, func(e *catalog.Fusion) { e.Priority = -5; e.Subsumes = []string{"t-gd"} }),
			with(gd, func(e *catalog.Fusion) { e.Priority = 5 })}, 0,
			[]string{opp("t-ab", fDur(kAlpha, kBeta))}},
		// a subsumer that did not match hides nothing
		{"absent subsumer", []catalog.Fusion{with(testFusion("t-zz", []string{"zeta"}), func(e *catalog.Fusion) { e.Subsumes = []string{"t-ab"} }), ab}, 0,
			[]string{opp("t-ab", fDur(kAlpha, kBeta))}},
		// t-ab (7 us x 4 of 80 us = 35%) is under the report's 40% but
		// still claims beta, so t-bg (25%) is not shown either
		{"hidden rows still claim", []catalog.Fusion{bg, ab}, 40, nil},
		// the entry's own min_share drops it before conflicts: t-ab needs
		// 36%, so t-bg keeps beta
		{"min_share drops before conflicts", []catalog.Fusion{bg, with(ab, func(e *catalog.Fusion) { e.MinShare = 36 })}, 0,
			[]string{opp("t-bg", fDur(kBeta, kGamma))}},
	}
	// each case with the report's min share 0 a run of its own and its
	// entries gated to it (caseEntries), all asked at once (matchesOf);
	// the others alone
	var entries []catalog.Fusion
	for i, c := range cases {
		if c.minPct == 0 {
			entries = append(entries, caseEntries(i, c.entries...)...)
		}
	}
	f := share.forCase(t, testCatalog(entries))
	runs := map[int]int64{}
	for i, c := range cases {
		if c.minPct == 0 {
			var tr int64
			runs[i], tr = f.caseRun(i)
			f.seq(tr, "decode", 7, 0, fRepeat(4, layer...)...)
		}
	}
	got := f.matchesOf(slices.Collect(maps.Values(runs))...)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if run, ok := runs[i]; ok {
				wantFusions(t, caseRows(got[run], i), c.want...)
				return
			}
			f, run, tr := share.ruleFX(t, c.entries...)
			f.seq(tr, "decode", 7, 0, fRepeat(4, layer...)...)
			wantFusions(t, f.matchesP(FusionMatchesParams{Run: run, MinShare: c.minPct}), c.want...)
		})
	}
}

// TestFusionStatusAndConfidence checks statuses per framework, the
// confidence rule and the row order.
func TestFusionStatusAndConfidence(t *testing.T) {
	t.Parallel()
	ab := testFusion("t-ab", []string{"alpha"}, []string{"beta"})
	vl := testFusion("t-vllm", []string{"gamma"}, []string{"delta"})
	vl.Framework = "vllm"
	fusedOnly := testFusion("t-fused")
	fusedOnly.Fused = []string{"pad_kernel"}
	low := testFusion("t-low", []string{"delta"}, []string{"pad"})
	low.Priority = -1

	f := newFusionFX(t, testCatalog([]catalog.Fusion{ab, vl, fusedOnly, low}))
	run := f.run("sglang", "test/model-7b", 1)
	tr := f.traceOf(run, 0, 0)
	// decode: 3 x alpha-beta (3 x 7 us of 62 us = 34%), 1 x gamma-delta
	f.seq(tr, "decode", 7, 0, kAlpha, kBeta, kAlpha, kBeta, kAlpha, kBeta, kGamma, kDelta, fkn("big_kernel", 30_000))
	// prefill: 1 x alpha-beta that is over likely_share (7 of 7 us)
	f.seq(tr, "prefill", 7, 10_000_000, kAlpha, kBeta)
	rows := f.matches(run)
	wantFusions(t, rows,
		fLine("prefill", "t-ab", FusionOpportunity, "confirmed", 1, fDur(kAlpha, kBeta)),
		fLine("decode", "t-ab", FusionOpportunity, "candidate", 3, 3*fDur(kAlpha, kBeta)),
		fLine("decode", "t-vllm", FusionElsewhere, "candidate", 1, fDur(kGamma, kDelta)))
	if len(rows) == 3 && (rows[2].Framework != "vllm" || rows[2].CandidatePath != "vllm: src/t-vllm.py") {
		t.Errorf("elsewhere row: %+v", rows[2])
	}

	// already-fused rows come after every chain row of their stage, even a
	// lower-priority one
	f2 := newFusionFX(t, testCatalog([]catalog.Fusion{fusedOnly, low}))
	run2 := f2.run("sglang", "test/model-7b", 1)
	f2.seq(f2.traceOf(run2, 0, 0), "decode", 7, 0, kDelta, fkn("pad_thing", 500), kPad)
	wantFusions(t, f2.matches(run2),
		fLine("decode", "t-low", FusionOpportunity, "candidate", 1, kDelta.dur+500),
		fLine("decode", "t-fused", FusionAlreadyFused, f2.conf(run2, "decode", kPad.dur, 1, testLikely), 1, kPad.dur))

	// the same warehouse gives the same rows, in the same order
	again := f.matches(run)
	if !slices.EqualFunc(rows, again, func(a, b FusionMatchesRow) bool { return fusionLine(a) == fusionLine(b) }) {
		t.Error("rows differ between two runs of the query")
	}
}

// TestFusionRanksAndStages checks the Rank and Stage filters and the share
// denominator per stage.
func TestFusionRanksAndStages(t *testing.T) {
	t.Parallel()
	f, run, tr0 := ruleFX(t, testFusion("t-ab", []string{"alpha"}, []string{"beta"}))
	tr1 := f.traceOf(run, 1, 1)
	f.seq(tr0, "decode", 7, 0, kAlpha, kBeta, kPad)
	f.seq(tr1, "decode", 7, 0, kAlpha, kBeta, kAlpha, kBeta)
	f.seq(tr1, "prefill", 7, 1_000_000, kAlpha, kBeta)
	ab := fDur(kAlpha, kBeta)
	wantFusions(t, f.matches(run),
		fLine("prefill", "t-ab", FusionOpportunity, "confirmed", 1, ab),
		fLine("decode", "t-ab", FusionOpportunity, f.conf(run, "decode", 3*ab, 3, testLikely), 3, 3*ab))
	one := sql.NullInt64{Int64: 1, Valid: true}
	rows := f.matchesP(FusionMatchesParams{Run: run, Rank: one, Stage: stageOnly("decode")})
	wantFusions(t, rows, fLine("decode", "t-ab", FusionOpportunity, "confirmed", 2, 2*ab))
	if len(rows) == 1 && rows[0].SharePct != 100 {
		t.Errorf("share %v, want 100 (rank 1 decode is all alpha-beta)", rows[0].SharePct)
	}
	rows = f.matchesP(FusionMatchesParams{Run: run, Stage: stageOnly("decode")})
	if len(rows) == 1 {
		if want := 100 * float64(3*ab) / float64(3*ab+kPad.dur); rows[0].SharePct != want {
			t.Errorf("share over both ranks %v, want %v", rows[0].SharePct, want)
		}
	}
}

// TestFusionModelGates checks models_any / models_none against the run's
// model path, and an unknown model.
func TestFusionModelGates(t *testing.T) {
	t.Parallel()
	share := sharedFusionFX(t)
	e := testFusion("t-ab", []string{"alpha"}, []string{"beta"})
	e.ModelsAny = []string{"qwen3", "DeepSeek"}
	e.ModelsNone = []string{"qwen3.5"}
	models := map[string]bool{
		"Qwen/Qwen3-8B":           true,
		"deepseek-ai/DeepSeek-V3": true, // case-insensitive
		"Qwen/Qwen3.5-27B":        false,
		"meta-llama/Llama-3.1-8B": false,
		"":                        false, // unknown never passes models_any
	}
	// each model a run of its own, all asked at once (matchesOf)
	f := share.forCase(t, testCatalog([]catalog.Fusion{e}))
	runs := map[string]int64{}
	for model := range models {
		runs[model] = f.run("sglang", model, 1)
		f.seq(f.traceOf(runs[model], 0, 0), "decode", 7, 0, kAlpha, kBeta)
	}
	rows := f.matchesOf(slices.Collect(maps.Values(runs))...)
	for model, want := range models {
		t.Run(model, func(t *testing.T) {
			if got := len(rows[runs[model]]) == 1; got != want {
				t.Errorf("model %q: matched %v, want %v", model, got, want)
			}
		})
	}
	t.Run("models_none alone passes an unknown model", func(t *testing.T) {
		e := testFusion("t-ab", []string{"alpha"}, []string{"beta"})
		e.ModelsNone = []string{"qwen3.5"}
		f := share.forCase(t, testCatalog([]catalog.Fusion{e}))
		run := f.run("sglang", "", 1)
		f.seq(f.traceOf(run, 0, 0), "decode", 7, 0, kAlpha, kBeta)
		wantFusions(t, f.matches(run), fLine("decode", "t-ab", FusionOpportunity, "confirmed", 1, fDur(kAlpha, kBeta)))
	})
}

// TestFusionKeywordForms checks where keywords match: short name, site (as
// file:line func and as its display, framework-relative), CPU op, with the
// letters-and-digits form on both sides.
func TestFusionKeywordForms(t *testing.T) {
	t.Parallel()
	share := sharedFusionFX(t)
	cases := []struct {
		name    string
		keyword string
		kernel  fk
		match   bool
	}{
		{"name, case-insensitive", "ALPHA", kAlpha, true},
		{"name, compact form", "fused_add_rmsnorm", fkn("FusedAddRMSNormKernel", 1000), true},
		{"name, camel to snake", "FusedAddRMSNorm", fkn("fused_add_rms_norm_kernel", 1000), true},
		{"site function", "apply_qk_norm", fkn("rmsnorm_kernel", 1000).at("models/utils.py:10 apply_qk_norm"), true},
		{"site file", "layernorm.py", fkn("rmsnorm_kernel", 1000).at("layers/layernorm.py:10 forward_cuda"), true},
		{"site file:line func form", "utils.py:10 apply", fkn("rmsnorm_kernel", 1000).at("models/utils.py:10 apply_qk_norm"), true},
		{"site display form", "apply_qk_norm @ models", fkn("rmsnorm_kernel", 1000).at("models/utils.py:10 apply_qk_norm"), true},
		// the install prefix (/opt/venv/...) is not part of the site text
		{"no install prefix", "venv", fkn("rmsnorm_kernel", 1000).at("models/utils.py:10 apply_qk_norm"), false},
		{"cpu op", "sgl_kernel::rmsnorm", fkn("some_kernel", 1000).op_("sgl_kernel::rmsnorm"), true},
		{"no hit", "zeta", kAlpha, false},
	}
	// each case a run of its own and its entry gated to it (caseEntries),
	// all asked at once (matchesOf)
	var entries []catalog.Fusion
	for i, c := range cases {
		entries = append(entries, caseEntries(i, testFusion("t-one", []string{c.keyword}))...)
	}
	f := share.forCase(t, testCatalog(entries))
	runs := make([]int64, len(cases))
	for i, c := range cases {
		var tr int64
		runs[i], tr = f.caseRun(i)
		f.seq(tr, "decode", 7, 0, c.kernel)
	}
	got := f.matchesOf(runs...)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := caseRows(got[runs[i]], i)
			if got := len(rows) == 1 && rows[0].ID == "t-one"; got != c.match || len(rows) > 1 {
				t.Errorf("keyword %q on %+v: matched %v (%d rows), want %v", c.keyword, c.kernel, got, len(rows), c.match)
			}
		})
	}
}
