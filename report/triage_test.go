package report

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/queries"
)

func valid(n int64) sql.NullInt64  { return sql.NullInt64{Int64: n, Valid: true} }
func vstr(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }

// triageData is a small hand-made query result: two stages, a kernel with
// two sites, one with one site, one without a site of its own, one unmapped, one hidden
// by --min-share, and an overlap and a fusion row.
func triageData(rank sql.NullInt64, mapping bool) *queries.TriageData {
	d := &queries.TriageData{
		Params: queries.TriageParams{Run: 1, Rank: rank, MinShare: 1},
		Run:    queries.TriageRunRow{RunID: 1, Label: "r1", Framework: "unknown", FrameworkEvidence: "no evidence", Model: "m", TP: valid(2)},
		Traces: []queries.TriageTracesRow{{TraceID: 1, Path: "a/t0.json", Rank: 0, Stage: "decode", Role: "formal", GPUEvents: 5}},
		GPUEvents: []queries.TriageGPUEventsRow{
			{Stage: "prefill", Rank: 0, Events: 1}, {Stage: "prefill", Rank: 1, Events: 0},
			{Stage: "decode", Rank: 0, Events: 4}, {Stage: "decode", Rank: 1, Events: 3},
		},
		StageBusy: []queries.StageBusyRow{
			{Stage: "prefill", Level: "stage", Kernels: 1, KernelNS: 1000, BusyNS: 1000, WindowNS: 1500, Streams: 1},
			{Stage: "decode", Level: "stage", Kernels: 4, KernelNS: 10000, BusyNS: 9000, WindowNS: 12000, Streams: 2},
			{Stage: "decode", Level: "device", Kernels: 4, KernelNS: 10000, BusyNS: 9000, WindowNS: 12000, Streams: 2},
		},
		Coverage: []queries.TriageCoverageRow{
			{Stage: vstr("prefill"), KernelNS: 1000, SitedNS: 1000, CoveragePct: 100},
			{Stage: vstr("decode"), KernelNS: 10000, SitedNS: 7000, CoveragePct: 70},
			{KernelNS: 11000, SitedNS: 8000, CoveragePct: 72.72727272727273},
		},
		Families: []queries.FamilyRollupRow{
			{Stage: "prefill", Family: "gemm", GPUNS: 1000, Launches: 1, StageKernelNS: 1000, SharePct: 100},
			{Stage: "decode", Family: "gemm", GPUNS: 6000, Launches: 2, StageKernelNS: 10000, SharePct: 60},
			{Stage: "decode", Family: "norm", GPUNS: 4000, Launches: 2, StageKernelNS: 10000, SharePct: 40},
		},
		Kernels: []queries.KernelTableRow{
			{Stage: "prefill", Kernel: "p|gemm", Family: "gemm", Category: "compute", GPUNS: 1000, Launches: 1, AvgNS: 1000, StageKernelNS: 1000, SharePct: 100, Shown: true, RankMinNS: 0, RankMedianNS: 500, RankMaxNS: 1000, Ranks: 2},
			{Stage: "decode", Kernel: "gemm<1>", Family: "gemm", Category: "compute", GPUNS: 6000, Launches: 2, AvgNS: 3000, StageKernelNS: 10000, SharePct: 60, Shown: true, RankMinNS: 2000, RankMedianNS: 3000, RankMaxNS: 4000, Ranks: 2, StageHiddenRows: 1, StageHiddenNS: 50},
			{Stage: "decode", Kernel: "norm", Family: "norm", Category: "elementwise", GPUNS: 3000, Launches: 1, AvgNS: 3000, StageKernelNS: 10000, SharePct: 30, Shown: true, Ranks: 2, StageHiddenRows: 1, StageHiddenNS: 50},
			{Stage: "decode", Kernel: "lost", Family: "norm", Category: "elementwise", GPUNS: 950, Launches: 1, AvgNS: 950, StageKernelNS: 10000, SharePct: 9.5, Shown: true, Ranks: 2, StageHiddenRows: 1, StageHiddenNS: 50},
			{Stage: "decode", Kernel: "tiny", Family: "norm", Category: "elementwise", GPUNS: 50, Launches: 1, AvgNS: 50, StageKernelNS: 10000, SharePct: 0.5, Shown: false, Ranks: 2, StageHiddenRows: 1, StageHiddenNS: 50},
		},
		Sites: []queries.KernelSitesRow{
			{Stage: "prefill", Kernel: "p|gemm", Match: "self", SiteRank: valid(1), Location: vstr("x.py:1 f"), SiteNS: 1000, KernelNS: 1000, SiteSharePct: 100, Sites: 1, SitedNS: 1000},
			{Stage: "decode", Kernel: "gemm<1>", Match: "self", SiteRank: valid(1), Location: vstr("a.py:10 forward"), SiteNS: 4000, KernelNS: 6000, SiteSharePct: 66.66666666666667, CPUOp: vstr("aten::mm"), Sites: 3, SitedNS: 6000},
			{Stage: "decode", Kernel: "gemm<1>", Match: "self", SiteRank: valid(2), Location: vstr("b.py:20 apply"), SiteNS: 1500, KernelNS: 6000, SiteSharePct: 25, Sites: 3, SitedNS: 6000},
			{Stage: "decode", Kernel: "norm", Match: "self", KernelNS: 3000},
			{Stage: "decode", Kernel: "lost", Match: "unmapped", KernelNS: 950},
			{Stage: "decode", Kernel: "tiny", Match: "self", KernelNS: 50},
		},
		Overlap: []queries.OverlapByKernelRow{
			{Stage: "decode", Priority: "P1", Verdict: "headroom", Kernel: "norm", Family: "norm", Category: "elementwise", Scope: "f @ a.py:1", ScopeMatch: "self", Launches: 1, TotalNS: 3000, ExclusiveNS: 3000, StageBusyNS: 9000, BusySharePct: 33.3, ExclusivePct: 100, DepRisk: "low", Recommendation: "try fusion"},
			{Stage: "decode", Priority: "P4", Verdict: "low-roi-hidden", Kernel: "lost", Family: "norm", Category: "elementwise", Scope: "unmapped", ScopeMatch: "unmapped", Launches: 1, TotalNS: 950, HiddenNS: 900, HiddenByComp: 900, ExclusiveNS: 50, StageBusyNS: 9000, BusySharePct: 10.6, ExclusivePct: 5.3, HiddenPct: 94.7, Dominant: sql.NullString{String: "gemm<1>", Valid: true}, DepRisk: "unclear", Recommendation: "skip overlap"},
		},
		KnownPaths: [][]queries.KnownPathsRow{nil, {{Index: 1, Kernel: "lost", Name: "Two-batch overlap", Framework: "sglang", Origin: "mainline"}}},
		Fusions: []queries.FusionMatchesRow{
			{Stage: "decode", Pattern: "add+norm", ID: "add-norm", Status: "opportunity", Confidence: "confirmed", RelatedNS: 3000, SharePct: 30, Occurrences: 4,
				Evidence: []string{"norm"}, Locations: []string{"a.py:10 forward"}, CandidatePath: "sglang: fused_add_rmsnorm", Sources: []string{"https://x"},
				Rationale: "why", Origin: "mainline", Framework: "sglang", Priority: 2, Steps: 2},
		},
		Similarity: []queries.FusionSimilarityRow{
			{Stage: "prefill", Level: "low", ID: "qk", Pattern: "QK norm + rope", Framework: "sglang", Origin: "mainline", Status: "opportunity",
				Steps: 3, MissingStep: 2, MissingKeywords: []string{"rope"}, Occurrences: 1, RelatedNS: 10, SharePct: 1, Evidence: []string{"p|gemm"}},
		},
	}
	if mapping {
		d.Params.Mapping = valid(2)
		d.MappingRun = &queries.TriageRunRow{RunID: 2, Label: "r2", Framework: "sglang", Model: "m"}
		d.MappingTraces = []queries.TriageTracesRow{{TraceID: 2, Path: "b/t0.json", Rank: 0, Stage: "decode", Role: "mapping", GPUEvents: 7}}
	}
	return d
}

func TestNewTriageSections(t *testing.T) {
	t.Parallel()
	r := NewTriage(triageData(valid(0), false), TriageOptions{})
	if r.Mode != ModeSingle || r.Framework != "unknown" || r.MappingRun != nil || *r.Rank != 0 || *r.Parallel.TP != 2 || r.Parallel.DP != nil {
		t.Fatalf("header: %+v", r)
	}
	if len(r.Stages) != 2 || r.Stages[0].Stage != "prefill" || r.Stages[1].Stage != "decode" {
		t.Fatalf("stages %+v", r.Stages)
	}
	dec := r.Stages[1]
	if dec.Totals.BusyTimeNS != 9000 || dec.Totals.BusyTimeUS != 9 || dec.Totals.GPUEvents != 4 || dec.Coverage.CoveragePct != 70 {
		t.Errorf("decode totals %+v coverage %+v", dec.Totals, dec.Coverage)
	}
	var kernels []string
	for _, k := range dec.Kernels {
		kernels = append(kernels, k.Kernel+":"+k.Location)
	}
	if !slices.Equal(kernels, []string{"gemm<1>:resolved", "norm:unmapped", "lost:unmapped"}) || dec.KernelsHidden != 1 || dec.HiddenTimeNS != 50 {
		t.Errorf("kernels %v hidden %d/%d", kernels, dec.KernelsHidden, dec.HiddenTimeNS)
	}
	g := dec.Kernels[0]
	if len(g.Sites) != 2 || *g.Sites[0].CPUOp != "aten::mm" || g.Sites[1].CPUOp != nil || g.RankSpread != nil || g.AvgUS != 3 {
		t.Errorf("gemm row %+v", g)
	}
	loc, ops := siteCells(g)
	if loc != "a.py:10 forward (site share 67%); b.py:20 apply (site share 25%)" || ops != "aten::mm; -" {
		t.Errorf("cells %q / %q", loc, ops)
	}
	if loc, ops := siteCells(r.Stages[0].Kernels[0]); loc != "x.py:1 f" || ops != "-" {
		t.Errorf("one site: %q / %q (no site share with a single site)", loc, ops)
	}
	if loc, _ := siteCells(dec.Kernels[2]); loc != "unmapped" {
		t.Errorf("unmapped cell %q", loc)
	}
	if dec.Overlap[0].Dominant != nil || *dec.Overlap[1].Dominant != "gemm<1>" ||
		dec.Overlap[1].Signal != "950 ns, share 10.6% of busy, excl 5% / hid 95%, under gemm<1>" {
		t.Errorf("overlap %+v", dec.Overlap)
	}
	if len(dec.Fusions) != 1 || dec.Fusions[0].RelatedUS != 3 || dec.Fusions[0].Switch != nil ||
		len(r.Stages[0].Fusions) != 0 || r.Stages[0].Fusions == nil {
		t.Errorf("fusions %+v", dec.Fusions)
	}
	if r.Stages[0].Similarity == nil || r.Stages[0].Similarity.MissingStep != 2 || dec.Similarity != nil {
		t.Errorf("similarity notes: %+v / %+v", r.Stages[0].Similarity, dec.Similarity)
	}
	if len(dec.Overlap[0].KnownPaths) != 0 || dec.Overlap[0].KnownPaths == nil || len(dec.Overlap[1].KnownPaths) != 1 {
		t.Errorf("known paths: %v / %v", dec.Overlap[0].KnownPaths, dec.Overlap[1].KnownPaths)
	}
}

func TestNewTriageFramework(t *testing.T) {
	t.Parallel()
	r := NewTriage(triageData(valid(0), false), TriageOptions{Framework: "vllm"})
	if r.Framework != "vLLM" || !strings.Contains(r.FrameworkEvidence, "--framework vllm") || len(r.Notes) != 0 {
		t.Errorf("override of unknown: %q %q %v", r.Framework, r.FrameworkEvidence, r.Notes)
	}
	d := triageData(valid(0), false)
	d.Run.Framework, d.Run.FrameworkEvidence = "sglang", "server_args.json"
	r = NewTriage(d, TriageOptions{Framework: "vllm"})
	if r.Framework != "SGLang" || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "ignored") {
		t.Errorf("override of a detected framework: %q %v", r.Framework, r.Notes)
	}
	r = NewTriage(d, TriageOptions{Framework: "auto"})
	if r.Framework != "SGLang" || len(r.Notes) != 0 {
		t.Errorf("auto: %q %v", r.Framework, r.Notes)
	}
}

func TestTriageTextAndMarkdown(t *testing.T) {
	t.Parallel()
	r := NewTriage(triageData(sql.NullInt64{}, true), TriageOptions{})
	var text, md bytes.Buffer
	if err := Render(&text, Text, r.Doc(Text)); err != nil {
		t.Fatal(err)
	}
	if err := Render(&md, Markdown, r.Doc(Markdown)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Mode: mapping-formal",
		"Run: r1 (formal; mapping: r2)   Model: m   TP/DP/EP/PP: 2/-/-/-",
		"  a/t0.json (rank 0, decode, formal run r1)",
		"  b/t0.json (rank 0, decode, mapping run r2)",
		"GPU events: extend/prefill rank 0: 1, rank 1: 0; decode rank 0: 4, rank 1: 3",
		"  no GPU events: extend/prefill rank 1",
		"Stage decode: summed kernel time 10.0 µs, GPU busy (union) 9.00 µs, window 12.0 µs, streams 2",
		"Mapping coverage: 72.7% of formal kernel time received a Python site from r2 (extend/prefill 100.0%, decode 70.0%)",
		"decode (all ranks)",
		"Families: gemm 60.0%, norm 40.0% (of summed kernel time)",
		"Rank spread",
		"2.000 / 3.000 / 4.000 µs", // gemm<1>: ranks 2000, 3000, 4000 ns
		"skip overlap    Two-batch overlap (sglang, mainline)",
		"Similarity (low): 2 of 3 steps of \"QK norm + rope\"",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if !strings.Contains(md.String(), "| add+norm | opportunity | confirmed | 3.00 µs | 30.0% | norm | a.py:10 forward | sglang: fused_add_rmsnorm | why |") ||
		!strings.Contains(md.String(), `| p\|gemm |`) || !strings.Contains(md.String(), `gemm\<1>`) {
		t.Errorf("markdown escaping:\n%s", md.String())
	}
}

func TestTriageCSVTables(t *testing.T) {
	t.Parallel()
	r := NewTriage(triageData(valid(0), false), TriageOptions{})
	var names []string
	for _, tb := range r.CSVTables() {
		names = append(names, tb.Name)
		for _, row := range tb.Rows {
			if len(row) != len(tb.Columns) {
				t.Errorf("%s: row of %d cells, %d columns", tb.Name, len(row), len(tb.Columns))
			}
		}
	}
	want := []string{"r1.traces", "r1.gpu_events", "r1.stages",
		"r1.prefill.families", "r1.prefill.kernels", "r1.prefill.overlap", "r1.prefill.fusions",
		"r1.decode.families", "r1.decode.kernels", "r1.decode.overlap", "r1.decode.fusions"}
	if !slices.Equal(names, want) {
		t.Errorf("tables %v", names)
	}
}

// jsonKeyPaths marshals v and returns, sorted, its JSON key paths that
// begin with one of prefixes.
func jsonKeyPaths(t *testing.T, v any, prefixes ...string) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	keyPaths("", doc, got)
	var names []string
	for k := range got {
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				names = append(names, k)
				break
			}
		}
	}
	sort.Strings(names)
	return names
}

// keyPaths lists every key path of a JSON value ("stages[].kernels[].kernel").
func keyPaths(prefix string, v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			out[p] = true
			keyPaths(p, e, out)
		}
	case []any:
		for _, e := range x {
			keyPaths(prefix+"[]", e, out)
		}
	}
}

// TestTriageJSONFieldNames pins every JSON field name of the triage report.
// Renaming or removing one breaks users' scripts: the contract names of
// issue 3 must never change; additions must be made here on purpose.
func TestTriageJSONFieldNames(t *testing.T) {
	t.Parallel()
	r := NewTriage(triageData(sql.NullInt64{}, true), TriageOptions{})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	keyPaths("", v, got)
	want := []string{
		"coverage", "coverage.base_time_ns", "coverage.coverage_pct", "coverage.exact_time_ns",
		"coverage.cross_stage_time_ns", "coverage.graph_replay_time_ns",
		"coverage.kernel_time_ns", "coverage.sited_time_ns", "coverage.unmapped_time_ns",
		"framework", "framework_evidence",
		"gpu_events", "gpu_events[].events", "gpu_events[].rank", "gpu_events[].stage",
		"mapping_run", "min_share_pct", "mode", "model", "notes",
		"parallel", "parallel.dp", "parallel.ep", "parallel.pp", "parallel.tp",
		"rank", "run", "run_id",
		"stages", "stages[].coverage", "stages[].coverage.base_time_ns", "stages[].coverage.coverage_pct",
		"stages[].coverage.exact_time_ns", "stages[].coverage.cross_stage_time_ns", "stages[].coverage.graph_replay_time_ns", "stages[].coverage.kernel_time_ns", "stages[].coverage.sited_time_ns",
		"stages[].coverage.unmapped_time_ns",
		"stages[].families", "stages[].families[].family", "stages[].families[].gpu_time_ns",
		"stages[].families[].gpu_time_us", "stages[].families[].launches", "stages[].families[].share_pct",
		"stages[].fusions", "stages[].fusions[].confidence", "stages[].fusions[].evidence", "stages[].fusions[].evidence_share_pct",
		"stages[].fusions[].framework", "stages[].fusions[].fused_path", "stages[].fusions[].id",
		"stages[].fusions[].locations", "stages[].fusions[].occurrences", "stages[].fusions[].origin",
		"stages[].fusions[].pattern", "stages[].fusions[].priority", "stages[].fusions[].rationale",
		"stages[].fusions[].related_ns", "stages[].fusions[].related_us",
		"stages[].fusions[].share_pct", "stages[].fusions[].sources", "stages[].fusions[].status",
		"stages[].fusions[].steps", "stages[].fusions[].switch",
		"stages[].comm_overlap", // its fields: TestTriageCommOverlap
		"stages[].hidden_time_ns",
		"stages[].idle", // its fields: TestTriageIdleSection
		"stages[].kernels", "stages[].kernels[].avg_us", "stages[].kernels[].category", "stages[].kernels[].family",
		"stages[].kernels[].gpu_time_ns", "stages[].kernels[].gpu_time_us", "stages[].kernels[].kernel",
		"stages[].kernels[].launch", // its fields: TestTriageLaunch
		"stages[].kernels[].launches", "stages[].kernels[].location_status", "stages[].kernels[].match",
		"stages[].kernels[].rank_spread", "stages[].kernels[].rank_spread.max_us", "stages[].kernels[].rank_spread.median_us",
		"stages[].kernels[].rank_spread.min_us", "stages[].kernels[].rank_spread.ranks",
		"stages[].kernels[].share_pct", "stages[].kernels[].site_count", "stages[].kernels[].sites",
		"stages[].kernels[].sites[].cpu_op", "stages[].kernels[].sites[].location",
		"stages[].kernels[].sites[].site_share_pct", "stages[].kernels[].sites[].site_time_ns",
		"stages[].kernels[].spread", // its fields: TestTriageSpread
		"stages[].kernels_hidden",
		"stages[].launch", // its fields: TestTriageLaunch
		"stages[].overlap", "stages[].overlap[].busy_share_pct", "stages[].overlap[].category",
		"stages[].overlap[].dep_risk", "stages[].overlap[].dominant", "stages[].overlap[].exclusive_ns",
		"stages[].overlap[].exclusive_pct", "stages[].overlap[].family", "stages[].overlap[].hidden_by_compute_ns",
		"stages[].overlap[].hidden_ns", "stages[].overlap[].hidden_pct", "stages[].overlap[].kernel",
		"stages[].overlap[].known_paths",
		"stages[].overlap[].launches", "stages[].overlap[].priority", "stages[].overlap[].recommendation",
		"stages[].overlap[].scope", "stages[].overlap[].scope_match", "stages[].overlap[].signal",
		"stages[].overlap[].stage_busy_ns", "stages[].overlap[].total_ns", "stages[].overlap[].total_us",
		"stages[].overlap[].verdict",
		"stages[].rank",
		"stages[].similarity", "stages[].similarity.evidence", "stages[].similarity.framework",
		"stages[].similarity.id", "stages[].similarity.level", "stages[].similarity.missing_keywords",
		"stages[].similarity.missing_step", "stages[].similarity.note", "stages[].similarity.occurrences",
		"stages[].similarity.origin", "stages[].similarity.pattern", "stages[].similarity.related_ns",
		"stages[].similarity.share_pct", "stages[].similarity.status", "stages[].similarity.steps",
		"stages[].stage",
		"stages[].straggler", // its fields: TestTriageStraggler
		"stages[].totals", "stages[].totals.busy_time_ns", "stages[].totals.busy_time_us", "stages[].totals.gpu_events",
		"stages[].totals.kernel_time_ns", "stages[].totals.kernel_time_us", "stages[].totals.streams",
		"stages[].totals.window_ns", "stages[].totals.window_us",
		"traces", "traces[].gpu_events", "traces[].path", "traces[].rank", "traces[].role", "traces[].run", "traces[].stage",
	}
	var gotList []string
	for k := range got {
		gotList = append(gotList, k)
	}
	sort.Strings(gotList)
	if !slices.Equal(gotList, want) {
		for _, k := range gotList {
			if !slices.Contains(want, k) {
				t.Errorf("new JSON field %s: add it to this list on purpose", k)
			}
		}
		for _, k := range want {
			if !got[k] {
				t.Errorf("JSON field %s is gone: the contract changed", k)
			}
		}
	}
}

func TestSimilarityNote(t *testing.T) {
	t.Parallel()
	r := queries.FusionSimilarityRow{Stage: "decode", Level: "high", ID: "t-abg", Pattern: "Test t-abg", Framework: "sglang",
		Origin: "mainline", Status: "opportunity", Steps: 3, MissingStep: 3, MissingKeywords: []string{"gamma", "gamma2"},
		Occurrences: 4, RelatedNS: 28_000, SharePct: 100 * 28.0 / 68.0}
	want := `Similarity (high): 2 of 3 steps of "Test t-abg" (sglang, mainline) occur adjacently 4 time(s), 41.18% of stage kernel time; step 3 (gamma / gamma2) is missing`
	if got := similarityNote(r); got != want {
		t.Errorf("note:\n got %s\nwant %s", got, want)
	}
}

func TestKnownPathLabel(t *testing.T) {
	t.Parallel()
	r := queries.KnownPathsRow{Name: "Overlap o-sglang-gather", Framework: "sglang", Origin: "upstream"}
	if l := KnownPathLabel(r); l != "Known path: Overlap o-sglang-gather (sglang, upstream)" {
		t.Errorf("label %q", l)
	}
	// another serving framework's entry (issue 36 item 15)
	r = queries.KnownPathsRow{Name: "TokenSpeed allreduce / communication fusion", Framework: "tokenspeed", Origin: "upstream", Elsewhere: true}
	if l := KnownPathLabel(r); l != "Known path elsewhere: TokenSpeed allreduce / communication fusion (tokenspeed, upstream)" {
		t.Errorf("label elsewhere %q", l)
	}
}
