package report

import (
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/queries"
)

// The triage report (spec/triage.md): a typed model whose JSON form is the
// machine contract of issue 3, built from queries.TriageData without
// computing any figure (every number is a query's), and rendered as a Doc
// for text and markdown, or as machine-readable CSV tables.

// Triage modes.
const (
	ModeSingle  = "single-trace"
	ModeMapping = "mapping-formal"
)

// TriageReport is one run's triage report. The JSON names of issue 3
// (mode, framework, run, model, stages[stage, rank, totals, kernels,
// overlap, fusions]) are a contract: a test pins them. Times are µs as
// numbers, with the exact nanoseconds beside them.
type TriageReport struct {
	Mode              string         `json:"mode"`
	Framework         string         `json:"framework"`
	FrameworkEvidence string         `json:"framework_evidence"`
	Run               string         `json:"run"`
	RunID             int64          `json:"run_id"`
	MappingRun        *string        `json:"mapping_run"`
	Model             string         `json:"model"`
	Parallel          TriageParallel `json:"parallel"`
	// Rank is the rank shown (null: every rank, summed).
	Rank        *int64              `json:"rank"`
	MinSharePct float64             `json:"min_share_pct"`
	Traces      []TriageTrace       `json:"traces"`
	GPUEvents   []TriageGPUEvents   `json:"gpu_events"`
	Coverage    TriageCoverage      `json:"coverage"`
	Stages      []TriageStage       `json:"stages"`
	Notes       []string            `json:"notes"`
	frameworkID string              // sglang | vllm | ... as stored
	timelines   map[string][]string // per stage, rendered by the caller
}

// TriageParallel is the run's parallel layout; null when not recorded.
type TriageParallel struct {
	TP *int64 `json:"tp"`
	DP *int64 `json:"dp"`
	EP *int64 `json:"ep"`
	PP *int64 `json:"pp"`
}

// TriageTrace is one trace file behind the report.
type TriageTrace struct {
	Run       string `json:"run"`
	Path      string `json:"path"`
	Rank      int64  `json:"rank"`
	Stage     string `json:"stage"`
	Role      string `json:"role"`
	GPUEvents int64  `json:"gpu_events"`
}

// TriageGPUEvents counts the timing run's GPU events of one stage and rank;
// 0 says that pair has none.
type TriageGPUEvents struct {
	Stage  string `json:"stage"`
	Rank   int64  `json:"rank"`
	Events int64  `json:"events"`
}

// TriageCoverage is the share of kernel time with a Python site: the
// kernels' own launch sites (single-trace) or sites transferred from the
// mapping run (two-trace; then the match split is filled).
type TriageCoverage struct {
	KernelTimeNS int64   `json:"kernel_time_ns"`
	SitedTimeNS  int64   `json:"sited_time_ns"`
	CoveragePct  float64 `json:"coverage_pct"`
	ExactTimeNS  int64   `json:"exact_time_ns"`
	BaseTimeNS   int64   `json:"base_time_ns"`
	UnmappedNS   int64   `json:"unmapped_time_ns"`
}

// TriageStage is one stage section.
type TriageStage struct {
	Stage    string         `json:"stage"`
	Rank     *int64         `json:"rank"`
	Totals   TriageTotals   `json:"totals"`
	Coverage TriageCoverage `json:"coverage"`
	Families []TriageFamily `json:"families"`
	Kernels  []TriageKernel `json:"kernels"`
	// What --min-share hid from Kernels.
	KernelsHidden int64           `json:"kernels_hidden"`
	HiddenTimeNS  int64           `json:"hidden_time_ns"`
	Overlap       []TriageOverlap `json:"overlap"`
	Fusions       []TriageFusion  `json:"fusions"`
	// Similarity is null unless no catalog chain matched but one nearly did.
	Similarity  *TriageSimilarity `json:"similarity"`
	displayName string
	hasTotals   bool
}

// TriageTotals are a stage's GPU time figures over the shown rank(s).
type TriageTotals struct {
	KernelTimeUS float64 `json:"kernel_time_us"`
	BusyTimeUS   float64 `json:"busy_time_us"`
	WindowUS     float64 `json:"window_us"`
	Streams      int64   `json:"streams"`
	KernelTimeNS int64   `json:"kernel_time_ns"`
	BusyTimeNS   int64   `json:"busy_time_ns"`
	WindowNS     int64   `json:"window_ns"`
	GPUEvents    int64   `json:"gpu_events"`
}

// TriageFamily is one entry of the family roll-up.
type TriageFamily struct {
	Family    string  `json:"family"`
	GPUTimeUS float64 `json:"gpu_time_us"`
	GPUTimeNS int64   `json:"gpu_time_ns"`
	SharePct  float64 `json:"share_pct"`
	Launches  int64   `json:"launches"`
}

// TriageKernel is one kernel-table row.
type TriageKernel struct {
	Kernel    string  `json:"kernel"`
	Family    string  `json:"family"`
	Category  string  `json:"category"`
	GPUTimeUS float64 `json:"gpu_time_us"`
	SharePct  float64 `json:"share_pct"`
	Launches  int64   `json:"launches"`
	AvgUS     float64 `json:"avg_us"`
	// Sites are the best two Python locations; empty when none.
	Sites []TriageSite `json:"sites"`
	// Location says why Sites may be empty: resolved | unresolved | unmapped.
	Location string `json:"location_status"`
	// Match is how the name found its scope: self | exact | base | unmapped.
	Match      string            `json:"match"`
	SiteCount  int64             `json:"site_count"`
	GPUTimeNS  int64             `json:"gpu_time_ns"`
	RankSpread *TriageRankSpread `json:"rank_spread"`
}

// TriageSite is one Python location of a kernel.
type TriageSite struct {
	Location     string  `json:"location"`
	SiteSharePct float64 `json:"site_share_pct"`
	// CPUOp is the most frequent cpu_op there; null when none.
	CPUOp      *string `json:"cpu_op"`
	SiteTimeNS int64   `json:"site_time_ns"`
}

// TriageRankSpread is a kernel's GPU time across ranks (--rank all).
type TriageRankSpread struct {
	MinUS    float64 `json:"min_us"`
	MedianUS float64 `json:"median_us"`
	MaxUS    float64 `json:"max_us"`
	Ranks    int64   `json:"ranks"`
}

// TriageOverlap is one overlap-opportunity row.
type TriageOverlap struct {
	Priority       string  `json:"priority"`
	Verdict        string  `json:"verdict"`
	Kernel         string  `json:"kernel"`
	Scope          string  `json:"scope"`
	TotalUS        float64 `json:"total_us"`
	BusySharePct   float64 `json:"busy_share_pct"`
	ExclusivePct   float64 `json:"exclusive_pct"`
	HiddenPct      float64 `json:"hidden_pct"`
	Dominant       *string `json:"dominant"`
	DepRisk        string  `json:"dep_risk"`
	Recommendation string  `json:"recommendation"`
	Family         string  `json:"family"`
	Category       string  `json:"category"`
	ScopeMatch     string  `json:"scope_match"`
	Launches       int64   `json:"launches"`
	Signal         string  `json:"signal"`
	TotalNS        int64   `json:"total_ns"`
	HiddenNS       int64   `json:"hidden_ns"`
	HiddenByCompNS int64   `json:"hidden_by_compute_ns"`
	ExclusiveNS    int64   `json:"exclusive_ns"`
	StageBusyNS    int64   `json:"stage_busy_ns"`
	// KnownPaths are the overlap-catalog entries matching the kernel or its
	// dominant kernel: `Known path: <name> (<framework>, <origin>)`.
	KnownPaths []string `json:"known_paths"`
}

// TriageFusion is one fuse-pattern row (triage.md section 5).
type TriageFusion struct {
	Pattern         string   `json:"pattern"`
	Status          string   `json:"status"`
	Confidence      string   `json:"confidence"`
	RelatedUS       float64  `json:"related_us"`
	SharePct        float64  `json:"share_pct"`
	EvidenceKernels []string `json:"evidence"`
	// Locations are the evidence kernels' Python sites (unmapped left out).
	Locations []string `json:"locations"`
	FusedPath string   `json:"fused_path"`
	Rationale string   `json:"rationale"`
	ID        string   `json:"id"`
	RelatedNS int64    `json:"related_ns"`
	// Occurrences counts chain occurrences, or fused kernels.
	Occurrences int64    `json:"occurrences"`
	Sources     []string `json:"sources"`
	Switch      *string  `json:"switch"`
	Origin      string   `json:"origin"`
	Framework   string   `json:"framework"`
	Priority    int64    `json:"priority"`
	Steps       int64    `json:"steps"`
}

// TriageSimilarity is the one near-miss note a stage may get after its
// fuse-pattern table when no catalog chain occurs whole.
type TriageSimilarity struct {
	Level           string   `json:"level"`
	ID              string   `json:"id"`
	Pattern         string   `json:"pattern"`
	Framework       string   `json:"framework"`
	Origin          string   `json:"origin"`
	Status          string   `json:"status"`
	Steps           int64    `json:"steps"`
	MissingStep     int64    `json:"missing_step"`
	MissingKeywords []string `json:"missing_keywords"`
	Occurrences     int64    `json:"occurrences"`
	RelatedNS       int64    `json:"related_ns"`
	SharePct        float64  `json:"share_pct"`
	Evidence        []string `json:"evidence"`
	Note            string   `json:"note"`
}

// TriageOptions are the display choices a triage report needs besides the
// data.
type TriageOptions struct {
	// Framework overrides the displayed framework when the warehouse says
	// unknown ("" or "auto": no override).
	Framework string
}

// frameworkNames are the display names of triage.md section 2.
var frameworkNames = map[string]string{
	"sglang": "SGLang", "vllm": "vLLM", "trtllm": "TensorRT-LLM", "tokenspeed": "TokenSpeed", "unknown": "unknown",
}

// FrameworkName is the display name of a stored framework id.
func FrameworkName(id string) string {
	if n, ok := frameworkNames[id]; ok {
		return n
	}
	return id
}

// StageName shows prefill the way SGLang users know it.
func StageName(s string) string {
	if s == "prefill" {
		return "extend/prefill"
	}
	return s
}

func nsToUS(ns int64) float64 { return float64(ns) / 1000 }

func optInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	n := v.Int64
	return &n
}

// NewTriage builds the report of d. It formats and joins query results; it
// computes no figure.
func NewTriage(d *queries.TriageData, opt TriageOptions) *TriageReport {
	r := &TriageReport{
		Mode:              ModeSingle,
		Framework:         FrameworkName(d.Run.Framework),
		FrameworkEvidence: d.Run.FrameworkEvidence,
		Run:               d.Run.Label,
		RunID:             d.Run.RunID,
		Model:             d.Run.Model,
		Parallel:          TriageParallel{TP: optInt(d.Run.TP), DP: optInt(d.Run.DP), EP: optInt(d.Run.EP), PP: optInt(d.Run.PP)},
		Rank:              optInt(d.Params.Rank),
		MinSharePct:       d.Params.MinShare,
		Traces:            []TriageTrace{},
		GPUEvents:         []TriageGPUEvents{},
		Stages:            []TriageStage{},
		Notes:             []string{},
		frameworkID:       d.Run.Framework,
	}
	if fw := strings.ToLower(opt.Framework); fw != "" && fw != "auto" && fw != d.Run.Framework {
		if d.Run.Framework == "unknown" {
			r.Framework = FrameworkName(fw)
			r.FrameworkEvidence = "--framework " + fw + " (the traces did not say)"
			r.frameworkID = fw
		} else {
			r.Notes = append(r.Notes, fmt.Sprintf("--framework %s ignored: the traces say %s (%s)",
				fw, FrameworkName(d.Run.Framework), d.Run.FrameworkEvidence))
		}
	}
	if d.MappingRun != nil {
		r.Mode = ModeMapping
		m := d.MappingRun.Label
		r.MappingRun = &m
	}
	for _, t := range d.Traces {
		r.Traces = append(r.Traces, TriageTrace{Run: d.Run.Label, Path: t.Path, Rank: t.Rank, Stage: t.Stage, Role: t.Role, GPUEvents: t.GPUEvents})
	}
	if d.MappingRun != nil {
		for _, t := range d.MappingTraces {
			r.Traces = append(r.Traces, TriageTrace{Run: d.MappingRun.Label, Path: t.Path, Rank: t.Rank, Stage: t.Stage, Role: t.Role, GPUEvents: t.GPUEvents})
		}
	}
	for _, g := range d.GPUEvents {
		r.GPUEvents = append(r.GPUEvents, TriageGPUEvents{Stage: g.Stage, Rank: g.Rank, Events: g.Events})
	}
	stageCoverage := map[string]TriageCoverage{}
	for _, c := range d.Coverage {
		tc := TriageCoverage{KernelTimeNS: c.KernelNS, SitedTimeNS: c.SitedNS, CoveragePct: c.CoveragePct,
			ExactTimeNS: c.ExactNS, BaseTimeNS: c.BaseNS, UnmappedNS: c.UnmappedNS}
		if c.Stage.Valid {
			stageCoverage[c.Stage.String] = tc
		} else {
			r.Coverage = tc
		}
	}

	// Sections: the stages the kernel table has rows for, in its order.
	index := map[string]int{}
	section := func(stage string) *TriageStage {
		if i, ok := index[stage]; ok {
			return &r.Stages[i]
		}
		index[stage] = len(r.Stages)
		r.Stages = append(r.Stages, TriageStage{Stage: stage, Rank: r.Rank, Coverage: stageCoverage[stage],
			Families: []TriageFamily{}, Kernels: []TriageKernel{}, Overlap: []TriageOverlap{},
			Fusions: []TriageFusion{}, displayName: StageName(stage)})
		return &r.Stages[len(r.Stages)-1]
	}
	type nameKey struct{ stage, kernel string }
	sites := map[nameKey][]queries.KernelSitesRow{}
	for _, s := range d.Sites {
		k := nameKey{s.Stage, s.Kernel}
		sites[k] = append(sites[k], s)
	}
	for _, k := range d.Kernels {
		st := section(k.Stage)
		if !k.Shown {
			st.KernelsHidden++
			st.HiddenTimeNS += k.GPUNS
			continue
		}
		row := TriageKernel{Kernel: k.Kernel, Family: k.Family, Category: k.Category,
			GPUTimeUS: nsToUS(k.GPUNS), SharePct: k.SharePct, Launches: k.Launches, AvgUS: k.AvgNS / 1000,
			Sites: []TriageSite{}, Location: "unresolved", Match: "self", GPUTimeNS: k.GPUNS}
		for _, s := range sites[nameKey{k.Stage, k.Kernel}] {
			row.Match, row.SiteCount = s.Match, s.Sites
			if !s.Location.Valid {
				continue
			}
			ts := TriageSite{Location: s.Location.String, SiteSharePct: s.SiteSharePct, SiteTimeNS: s.SiteNS}
			if s.CPUOp.Valid {
				op := s.CPUOp.String
				ts.CPUOp = &op
			}
			row.Sites = append(row.Sites, ts)
		}
		switch {
		case len(row.Sites) > 0:
			row.Location = "resolved"
		case row.Match == "unmapped":
			row.Location = "unmapped"
		}
		if r.Rank == nil {
			row.RankSpread = &TriageRankSpread{MinUS: nsToUS(k.RankMinNS), MedianUS: k.RankMedianNS / 1000,
				MaxUS: nsToUS(k.RankMaxNS), Ranks: k.Ranks}
		}
		st.Kernels = append(st.Kernels, row)
	}
	for _, f := range d.Families {
		st := section(f.Stage)
		st.Families = append(st.Families, TriageFamily{Family: f.Family, GPUTimeUS: nsToUS(f.GPUNS),
			GPUTimeNS: f.GPUNS, SharePct: f.SharePct, Launches: f.Launches})
	}
	for _, b := range d.StageBusy {
		if b.Level != "stage" {
			continue
		}
		st := section(b.Stage)
		st.hasTotals = true
		st.Totals = TriageTotals{KernelTimeUS: nsToUS(b.KernelNS), BusyTimeUS: nsToUS(b.BusyNS),
			WindowUS: nsToUS(b.WindowNS), Streams: b.Streams, KernelTimeNS: b.KernelNS,
			BusyTimeNS: b.BusyNS, WindowNS: b.WindowNS, GPUEvents: b.Kernels}
	}
	for i, o := range d.Overlap {
		st := section(o.Stage)
		row := TriageOverlap{Priority: o.Priority, Verdict: o.Verdict, Kernel: o.Kernel, Scope: o.Scope,
			TotalUS: nsToUS(o.TotalNS), BusySharePct: o.BusySharePct, ExclusivePct: o.ExclusivePct,
			HiddenPct: o.HiddenPct, DepRisk: o.DepRisk, Recommendation: o.Recommendation,
			Family: o.Family, Category: o.Category, ScopeMatch: o.ScopeMatch, Launches: o.Launches,
			TotalNS: o.TotalNS, HiddenNS: o.HiddenNS, HiddenByCompNS: o.HiddenByComp,
			ExclusiveNS: o.ExclusiveNS, StageBusyNS: o.StageBusyNS, KnownPaths: []string{}}
		if o.Dominant.Valid {
			dom := o.Dominant.String
			row.Dominant = &dom
		}
		if i < len(d.KnownPaths) {
			for _, k := range d.KnownPaths[i] {
				row.KnownPaths = append(row.KnownPaths, KnownPathLabel(k))
			}
		}
		row.Signal = overlapSignal(row)
		st.Overlap = append(st.Overlap, row)
	}
	for _, f := range d.Fusions {
		st := section(f.Stage)
		row := TriageFusion{Pattern: f.Pattern, Status: f.Status, Confidence: f.Confidence,
			RelatedUS: nsToUS(f.RelatedNS), SharePct: f.SharePct, EvidenceKernels: nonNil(f.Evidence),
			Locations: nonNil(f.Locations), FusedPath: f.CandidatePath, Rationale: f.Rationale, ID: f.ID,
			RelatedNS: f.RelatedNS, Occurrences: f.Occurrences, Sources: nonNil(f.Sources),
			Origin: f.Origin, Framework: f.Framework, Priority: f.Priority, Steps: f.Steps}
		if f.Switch != "" {
			sw := f.Switch
			row.Switch = &sw
		}
		st.Fusions = append(st.Fusions, row)
	}
	for _, n := range d.Similarity {
		st := section(n.Stage)
		st.Similarity = &TriageSimilarity{Level: n.Level, ID: n.ID, Pattern: n.Pattern, Framework: n.Framework,
			Origin: n.Origin, Status: n.Status, Steps: n.Steps, MissingStep: n.MissingStep,
			MissingKeywords: nonNil(n.MissingKeywords), Occurrences: n.Occurrences, RelatedNS: n.RelatedNS,
			SharePct: n.SharePct, Evidence: nonNil(n.Evidence), Note: similarityNote(n)}
	}
	// A stage with no kernels is omitted (triage.md section 1); sections
	// only come from rows, so each has kernels, but keep the rule explicit.
	kept := r.Stages[:0]
	for _, st := range r.Stages {
		if st.Totals.GPUEvents > 0 || len(st.Kernels) > 0 || st.KernelsHidden > 0 {
			kept = append(kept, st)
		}
	}
	r.Stages = kept
	return r
}

// KnownPathLabel is the text an overlap-catalog entry adds to an overlap
// row (catalog.md section 3).
func KnownPathLabel(r queries.KnownPathsRow) string {
	return fmt.Sprintf("Known path: %s (%s, %s)", r.Name, r.Framework, r.Origin)
}

// similarityNote is the one line printed after a fuse-pattern table.
func similarityNote(r queries.FusionSimilarityRow) string {
	return fmt.Sprintf("Similarity (%s): %d of %d steps of %q (%s, %s) occur adjacently %d time(s), %.2f%% of stage kernel time; step %d (%s) is missing",
		r.Level, r.Steps-1, r.Steps, r.Pattern, r.Framework, r.Origin, r.Occurrences, r.SharePct,
		r.MissingStep, strings.Join(r.MissingKeywords, " / "))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// overlapSignal is the Signal column of triage.md section 4.
func overlapSignal(o TriageOverlap) string {
	under := "-"
	if o.Dominant != nil {
		under = *o.Dominant
	}
	return fmt.Sprintf("%s us, share %.1f%% of busy, excl %.0f%% / hid %.0f%%, under %s",
		fmtUS(o.TotalNS), o.BusySharePct, o.ExclusivePct, o.HiddenPct, under)
}

// SetTimelines attaches pre-rendered ASCII timelines to a stage section.
func (r *TriageReport) SetTimelines(stage string, lines []string) {
	if r.timelines == nil {
		r.timelines = map[string][]string{}
	}
	r.timelines[stage] = lines
}

func fmtMS(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 2, 64) }
func fmtUS(ns int64) string { return strconv.FormatFloat(float64(ns)/1e3, 'f', 1, 64) }
func fmtPct(p float64) string {
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}

// maxTextName bounds kernel names in the text format, where a 600-character
// CUTLASS template name would push every other column off the terminal.
// Markdown, JSON and CSV keep the full name.
const maxTextName = 80

// shorten keeps the head and tail of a long name: the head says what it
// is, the tail often tells variants apart.
func shorten(s string) string {
	r := []rune(s)
	if len(r) <= maxTextName {
		return s
	}
	tail := maxTextName / 4
	return string(r[:maxTextName-tail-3]) + "..." + string(r[len(r)-tail:])
}

// Doc renders the report for the text or markdown format.
func (r *TriageReport) Doc(f Format) Doc {
	name := func(s string) string { return s }
	if f == Text {
		name = shorten
	}
	blocks := []any{&Heading{Level: 1, Text: "Triage View"}, r.headerLines()}
	for i := range r.Stages {
		st := &r.Stages[i]
		rank := "all ranks"
		if st.Rank != nil {
			rank = "rank " + strconv.FormatInt(*st.Rank, 10)
		}
		blocks = append(blocks, &Heading{Level: 2, Text: fmt.Sprintf("%s (%s)", st.displayName, rank)})
		blocks = append(blocks, Lines{r.familyLine(st)})
		sub := func(title string, b any) {
			if f == Text {
				// the text renderer separates only level-1/2 headings
				blocks = append(blocks, Lines{""})
			}
			blocks = append(blocks, &Heading{Level: 3, Text: title}, b)
		}
		sub("Kernels", r.kernelTable(st, name))
		sub("Overlap opportunities", overlapTable(st, name))
		if tl := r.timelines[st.Stage]; len(tl) > 0 {
			if f == Markdown {
				// keep the drawing's columns: a fenced block
				tl = append(append([]string{"```"}, tl...), "```")
			}
			sub("Timelines", Lines(tl))
		}
		sub("Fuse patterns", fusionTable(st, name))
		if st.Similarity != nil {
			// triage.md section 5: at most one note, never mixed into the table
			blocks = append(blocks, Lines{st.Similarity.Note})
		}
	}
	return Doc{Blocks: blocks, JSON: r}
}

func (r *TriageReport) headerLines() Lines {
	var l Lines
	l = append(l, "Mode: "+r.Mode)
	fw := "Framework: " + r.Framework
	if r.FrameworkEvidence != "" {
		fw += " (evidence: " + r.FrameworkEvidence + ")"
	}
	l = append(l, fw)
	par := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatInt(*p, 10)
	}
	run := "Run: " + r.Run
	if r.MappingRun != nil {
		run += " (formal; mapping: " + *r.MappingRun + ")"
	}
	l = append(l, fmt.Sprintf("%s   Model: %s   TP/DP/EP/PP: %s/%s/%s/%s", run, r.Model,
		par(r.Parallel.TP), par(r.Parallel.DP), par(r.Parallel.EP), par(r.Parallel.PP)))
	l = append(l, "Traces:")
	for _, t := range r.Traces {
		role := ""
		if r.MappingRun != nil {
			role = ", " + t.Role + " run " + t.Run
		}
		l = append(l, fmt.Sprintf("  %s (rank %d, %s%s)", t.Path, t.Rank, StageName(t.Stage), role))
	}
	l = append(l, r.gpuEventLines()...)
	for _, st := range r.Stages {
		if !st.hasTotals {
			continue
		}
		l = append(l, fmt.Sprintf("Stage %s: summed kernel time %s ms, GPU busy (union) %s ms, window %s ms, streams %d",
			st.displayName, fmtMS(st.Totals.KernelTimeNS), fmtMS(st.Totals.BusyTimeNS), fmtMS(st.Totals.WindowNS), st.Totals.Streams))
	}
	var per []string
	for _, st := range r.Stages {
		per = append(per, st.displayName+" "+fmtPct(st.Coverage.CoveragePct))
	}
	perStage := ""
	if len(per) > 1 {
		perStage = " (" + strings.Join(per, ", ") + ")"
	}
	c := r.Coverage
	if r.MappingRun == nil {
		l = append(l, fmt.Sprintf("Attribution: %s of kernel time has a Python site%s", fmtPct(c.CoveragePct), perStage))
	} else {
		pct := func(ns int64) string {
			if c.KernelTimeNS == 0 {
				return fmtPct(0)
			}
			return fmtPct(float64(ns) * 100 / float64(c.KernelTimeNS))
		}
		l = append(l, fmt.Sprintf("Mapping coverage: %s of formal kernel time received a Python site from %s%s",
			fmtPct(c.CoveragePct), *r.MappingRun, perStage))
		l = append(l, fmt.Sprintf("  matched by exact name %s, by template-stripped name %s, unmapped %s",
			pct(c.ExactTimeNS), pct(c.BaseTimeNS), pct(c.UnmappedNS)))
	}
	for _, n := range r.Notes {
		l = append(l, "Note: "+n)
	}
	return l
}

// gpuEventLines list GPU events per stage and rank and name the pairs
// with none.
func (r *TriageReport) gpuEventLines() []string {
	var parts, none []string
	for i := 0; i < len(r.GPUEvents); {
		stage := r.GPUEvents[i].Stage
		var ranks []string
		for ; i < len(r.GPUEvents) && r.GPUEvents[i].Stage == stage; i++ {
			g := r.GPUEvents[i]
			ranks = append(ranks, fmt.Sprintf("rank %d: %d", g.Rank, g.Events))
			if g.Events == 0 {
				none = append(none, fmt.Sprintf("%s rank %d", StageName(g.Stage), g.Rank))
			}
		}
		parts = append(parts, StageName(stage)+" "+strings.Join(ranks, ", "))
	}
	out := []string{"GPU events: " + strings.Join(parts, "; ")}
	if len(none) > 0 {
		out = append(out, "  no GPU events: "+strings.Join(none, ", "))
	} else if len(parts) > 0 {
		out = append(out, "  every stage has GPU events on every rank")
	} else {
		out[0] = "GPU events: none"
	}
	return out
}

func (r *TriageReport) familyLine(st *TriageStage) string {
	var parts []string
	for _, f := range st.Families {
		parts = append(parts, f.Family+" "+fmtPct(f.SharePct))
	}
	if len(parts) == 0 {
		return "Families: none"
	}
	return "Families: " + strings.Join(parts, ", ") + " (of summed kernel time)"
}

func (r *TriageReport) kernelTable(st *TriageStage, name func(string) string) *Table {
	cols := []Column{{Name: "Kernel"}, {Name: "Family"}, {Name: "Category"}, {Name: "GPU time", Right: true},
		{Name: "Share", Right: true}, {Name: "Launches", Right: true}, {Name: "Avg", Right: true}}
	if r.Rank == nil {
		cols = append(cols, Column{Name: "Rank spread", Right: true})
	}
	cols = append(cols, Column{Name: "Python location (site share)"}, Column{Name: "CPU op"})
	t := &Table{Name: "kernels", Columns: cols}
	for _, k := range st.Kernels {
		row := []string{name(k.Kernel), k.Family, k.Category, fmtMS(k.GPUTimeNS) + " ms", fmtPct(k.SharePct),
			strconv.FormatInt(k.Launches, 10), strconv.FormatFloat(k.AvgUS, 'f', 2, 64) + " us"}
		if r.Rank == nil && k.RankSpread != nil {
			s := k.RankSpread
			row = append(row, fmt.Sprintf("%.2f / %.2f / %.2f ms", s.MinUS/1000, s.MedianUS/1000, s.MaxUS/1000))
		}
		loc, ops := siteCells(k)
		row = append(row, loc, ops)
		t.Rows = append(t.Rows, row)
	}
	if len(t.Rows) == 0 {
		// triage.md section 3: an empty table prints one row saying so.
		msg := fmt.Sprintf("(no kernel reached %s of summed kernel time; %d hidden, --min-share 0 shows all)",
			strconv.FormatFloat(r.MinSharePct, 'f', -1, 64)+"%", st.KernelsHidden)
		row := make([]string, len(cols))
		row[0] = msg
		for i := 1; i < len(row); i++ {
			row[i] = "-"
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// siteCells are the "Python location (site share)" and "CPU op" cells.
func siteCells(k TriageKernel) (string, string) {
	if len(k.Sites) == 0 {
		return k.Location, "-"
	}
	var locs, ops []string
	for _, s := range k.Sites {
		loc := s.Location
		if k.SiteCount > 1 {
			loc += fmt.Sprintf(" (site share %.0f%%)", s.SiteSharePct)
		}
		locs = append(locs, loc)
		op := "-"
		if s.CPUOp != nil {
			op = *s.CPUOp
		}
		ops = append(ops, op)
	}
	return strings.Join(locs, "; "), strings.Join(ops, "; ")
}

func overlapTable(st *TriageStage, name func(string) string) *Table {
	t := &Table{Name: "overlap", Empty: "no overlap opportunity above the bar",
		Columns: []Column{{Name: "Priority"}, {Name: "Verdict"}, {Name: "Kernel"}, {Name: "Python scope"},
			{Name: "Signal"}, {Name: "Dep risk"}, {Name: "Recommendation"}}}
	for _, o := range st.Overlap {
		sig := o.Signal
		if o.Dominant != nil {
			sig = strings.TrimSuffix(sig, *o.Dominant) + name(*o.Dominant)
		}
		rec := o.Recommendation
		if len(o.KnownPaths) > 0 {
			rec += "; " + strings.Join(o.KnownPaths, "; ")
		}
		t.Rows = append(t.Rows, []string{o.Priority, o.Verdict, name(o.Kernel), o.Scope, sig, o.DepRisk, rec})
	}
	return t
}

func fusionTable(st *TriageStage, name func(string) string) *Table {
	t := &Table{Name: "fusions", Empty: "no fuse pattern matched",
		Columns: []Column{{Name: "Pattern"}, {Name: "Status"}, {Name: "Confidence"},
			{Name: "Related GPU time", Right: true}, {Name: "Share", Right: true}, {Name: "Evidence kernels"},
			{Name: "Current Python location"}, {Name: "Candidate fused path"}, {Name: "Rationale"}}}
	for _, f := range st.Fusions {
		ev := make([]string, len(f.EvidenceKernels))
		for i, k := range f.EvidenceKernels {
			ev[i] = name(k)
		}
		t.Rows = append(t.Rows, []string{f.Pattern, f.Status, f.Confidence, fmtMS(f.RelatedNS) + " ms",
			fmtPct(f.SharePct), strings.Join(ev, ", "), strings.Join(f.Locations, "; "), f.FusedPath, f.Rationale})
	}
	return t
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// CSVTables are the report as machine-readable tables, one file each with
// --out DIR: exact nanoseconds and unrounded shares, no units in cells.
// Names are `<run>.<table>` and `<run>.<stage>.<table>`.
func (r *TriageReport) CSVTables() []*Table {
	prefix := unsafeFileChars.ReplaceAllString(r.Run, "_")
	ff := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	traces := &Table{Name: prefix + ".traces", Columns: cols("run", "path", "rank", "stage", "role", "gpu_events")}
	for _, t := range r.Traces {
		traces.Rows = append(traces.Rows, []string{t.Run, t.Path, i64(t.Rank), t.Stage, t.Role, i64(t.GPUEvents)})
	}
	events := &Table{Name: prefix + ".gpu_events", Columns: cols("stage", "rank", "events")}
	for _, g := range r.GPUEvents {
		events.Rows = append(events.Rows, []string{g.Stage, i64(g.Rank), i64(g.Events)})
	}
	stages := &Table{Name: prefix + ".stages", Columns: cols("stage", "rank", "gpu_events", "kernel_time_ns",
		"busy_time_ns", "window_ns", "streams", "sited_time_ns", "coverage_pct", "exact_time_ns", "base_time_ns", "unmapped_time_ns")}
	out := []*Table{traces, events, stages}
	for _, st := range r.Stages {
		rank := "all"
		if st.Rank != nil {
			rank = i64(*st.Rank)
		}
		c := st.Coverage
		stages.Rows = append(stages.Rows, []string{st.Stage, rank, i64(st.Totals.GPUEvents), i64(st.Totals.KernelTimeNS),
			i64(st.Totals.BusyTimeNS), i64(st.Totals.WindowNS), i64(st.Totals.Streams), i64(c.SitedTimeNS),
			ff(c.CoveragePct), i64(c.ExactTimeNS), i64(c.BaseTimeNS), i64(c.UnmappedNS)})
		sp := prefix + "." + unsafeFileChars.ReplaceAllString(st.Stage, "_")
		fam := &Table{Name: sp + ".families", Columns: cols("family", "gpu_time_ns", "share_pct", "launches")}
		for _, f := range st.Families {
			fam.Rows = append(fam.Rows, []string{f.Family, i64(f.GPUTimeNS), ff(f.SharePct), i64(f.Launches)})
		}
		kt := &Table{Name: sp + ".kernels", Columns: cols("kernel", "family", "category", "gpu_time_ns", "share_pct",
			"launches", "avg_ns", "rank_min_ns", "rank_median_ns", "rank_max_ns", "location_status",
			"site1", "site1_share_pct", "site1_cpu_op", "site2", "site2_share_pct", "site2_cpu_op")}
		for _, k := range st.Kernels {
			row := []string{k.Kernel, k.Family, k.Category, i64(k.GPUTimeNS), ff(k.SharePct), i64(k.Launches),
				ff(k.AvgUS * 1000), "", "", ""}
			if k.RankSpread != nil {
				row[7], row[8], row[9] = ff(k.RankSpread.MinUS*1000), ff(k.RankSpread.MedianUS*1000), ff(k.RankSpread.MaxUS*1000)
			}
			row = append(row, k.Location)
			for i := 0; i < 2; i++ {
				if i < len(k.Sites) {
					op := ""
					if k.Sites[i].CPUOp != nil {
						op = *k.Sites[i].CPUOp
					}
					row = append(row, k.Sites[i].Location, ff(k.Sites[i].SiteSharePct), op)
				} else {
					row = append(row, "", "", "")
				}
			}
			kt.Rows = append(kt.Rows, row)
		}
		ov := &Table{Name: sp + ".overlap", Columns: cols("priority", "verdict", "kernel", "scope", "scope_match",
			"family", "category", "launches", "total_ns", "hidden_ns", "hidden_by_compute_ns", "exclusive_ns",
			"stage_busy_ns", "busy_share_pct", "exclusive_pct", "hidden_pct", "dominant", "dep_risk", "recommendation",
			"known_paths")}
		for _, o := range st.Overlap {
			dom := ""
			if o.Dominant != nil {
				dom = *o.Dominant
			}
			ov.Rows = append(ov.Rows, []string{o.Priority, o.Verdict, o.Kernel, o.Scope, o.ScopeMatch, o.Family,
				o.Category, i64(o.Launches), i64(o.TotalNS), i64(o.HiddenNS), i64(o.HiddenByCompNS), i64(o.ExclusiveNS),
				i64(o.StageBusyNS), ff(o.BusySharePct), ff(o.ExclusivePct), ff(o.HiddenPct), dom, o.DepRisk, o.Recommendation,
				strings.Join(o.KnownPaths, "; ")})
		}
		fu := &Table{Name: sp + ".fusions", Columns: cols("id", "pattern", "status", "confidence", "related_ns",
			"share_pct", "occurrences", "evidence", "locations", "fused_path", "rationale")}
		for _, f := range st.Fusions {
			fu.Rows = append(fu.Rows, []string{f.ID, f.Pattern, f.Status, f.Confidence, i64(f.RelatedNS), ff(f.SharePct),
				i64(f.Occurrences), strings.Join(f.EvidenceKernels, "; "), strings.Join(f.Locations, "; "), f.FusedPath, f.Rationale})
		}
		out = append(out, fam, kt, ov, fu)
	}
	return out
}

func cols(names ...string) []Column {
	out := make([]Column, len(names))
	for i, n := range names {
		out[i] = Column{Name: n}
	}
	return out
}
