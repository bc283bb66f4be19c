package report

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/vocab"
)

// The triage report (README, Triage): a typed model whose JSON form is the
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
	Rank        *int64                `json:"rank"`
	MinSharePct float64               `json:"min_share_pct"`
	Traces      []TriageTrace         `json:"traces"`
	GPUEvents   []TriageGPUEvents     `json:"gpu_events"`
	Coverage    TriageCoverage        `json:"coverage"`
	Stages      []TriageStage         `json:"stages"`
	Notes       []string              `json:"notes"`
	frameworkID string                // sglang | vllm | ... as stored
	windows     map[string][]Timeline // per stage, the timelines asked for
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
	// CrossStageTimeNS matched a name of another stage of the mapping run.
	CrossStageTimeNS int64 `json:"cross_stage_time_ns"`
	BaseTimeNS       int64 `json:"base_time_ns"`
	UnmappedNS       int64 `json:"unmapped_time_ns"`
	// ReplayTimeNS (single-trace) has no site of its own but is located by
	// the frame around its graph launch; it is not part of SitedTimeNS.
	ReplayTimeNS int64 `json:"graph_replay_time_ns"`
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
	Similarity *TriageSimilarity `json:"similarity"`
	// Idle is where the GPU waits (null: the stage has no steps).
	Idle *TriageIdle `json:"idle"`
	// Launch is the stage's launch overhead (null: no figures).
	Launch *TriageLaunch `json:"launch"`
	// CommOverlap is each rank's communication hidden under computation.
	CommOverlap []TriageCommOverlap `json:"comm_overlap"`
	// Straggler is the late rank at collectives (null: one rank shown, or
	// no collective matched across ranks).
	Straggler   *TriageStraggler `json:"straggler"`
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
	// Location says whether Sites hold the kernel's own (or transferred)
	// sites: resolved | graph-replay (the frame around its graph launch) |
	// unmapped (none).
	Location string `json:"location_status"`
	// Match is how the name found its scope: self | graph-replay | exact |
	// cross-stage | base | base-cross-stage | unmapped.
	Match      string            `json:"match"`
	SiteCount  int64             `json:"site_count"`
	GPUTimeNS  int64             `json:"gpu_time_ns"`
	RankSpread *TriageRankSpread `json:"rank_spread"`
	// Launch is its launch overhead (null: no figures).
	Launch *TriageKernelLaunch `json:"launch"`
	// Spread is its duration spread over its instances (null: no figures).
	Spread *TriageKernelSpread `json:"spread"`
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
	// dominant kernel: `Known path: <name> (<framework>, <origin>)`, or
	// `Known path elsewhere: ...` for another serving framework's entry.
	KnownPaths []string `json:"known_paths"`
}

// TriageFusion is one fuse-pattern row.
type TriageFusion struct {
	Pattern         string   `json:"pattern"`
	Status          string   `json:"status"`
	Confidence      string   `json:"confidence"`
	RelatedUS       float64  `json:"related_us"`
	SharePct        float64  `json:"share_pct"`
	EvidenceKernels []string `json:"evidence"`
	// EvidenceSharePct is each evidence kernel's share of the stage's summed
	// kernel time, in percent (same order).
	EvidenceSharePct []float64 `json:"evidence_share_pct"`
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
		Framework:         vocab.FrameworkName(d.Run.Framework),
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
			r.Framework = vocab.FrameworkName(fw)
			r.FrameworkEvidence = "--framework " + fw + " (the traces did not say)"
			r.frameworkID = fw
		} else {
			r.Notes = append(r.Notes, fmt.Sprintf("--framework %s ignored: the traces say %s (%s)",
				fw, vocab.FrameworkName(d.Run.Framework), d.Run.FrameworkEvidence))
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
			ExactTimeNS: c.ExactNS, CrossStageTimeNS: c.CrossStageNS, BaseTimeNS: c.BaseNS, UnmappedNS: c.UnmappedNS,
			ReplayTimeNS: c.ReplayNS}
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
			Fusions: []TriageFusion{}, displayName: vocab.StageName(stage)})
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
		st.KernelsHidden, st.HiddenTimeNS = k.StageHiddenRows, k.StageHiddenNS
		if !k.Shown {
			continue
		}
		row := TriageKernel{Kernel: k.Kernel, Family: k.Family, Category: k.Category,
			GPUTimeUS: nsToUS(k.GPUNS), SharePct: k.SharePct, Launches: k.Launches, AvgUS: k.AvgNS / 1000,
			Sites: []TriageSite{}, Location: "unmapped", Match: "self", GPUTimeNS: k.GPUNS}
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
		case len(row.Sites) > 0 && row.Match == "graph-replay":
			row.Location = "graph-replay"
		case len(row.Sites) > 0:
			row.Location = "resolved"
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
			EvidenceSharePct: append([]float64{}, f.EvidenceSharePct...),
			Locations:        nonNil(f.Locations), FusedPath: f.CandidatePath, Rationale: f.Rationale, ID: f.ID,
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
	r.addIdle(d, section)
	r.addLaunch(d, section)
	r.addSpread(d)
	r.addCommOverlap(d, section)
	r.addStraggler(d, section)
	// A stage with no kernels is omitted (the README's Triage section); sections
	// only come from rows, so each has kernels, but keep the rule explicit.
	kept := r.Stages[:0]
	for _, st := range r.Stages {
		if st.Totals.GPUEvents > 0 || len(st.Kernels) > 0 || st.KernelsHidden > 0 {
			kept = append(kept, st)
		}
	}
	r.Stages = kept
	r.windows = timelineWindows(d)
	return r
}

// KnownPathLabel is the text an overlap-catalog entry adds to an overlap
// row; another serving framework's entry says "elsewhere", so a row of an
// SGLang run does not read as if SGLang had that path.
func KnownPathLabel(r queries.KnownPathsRow) string {
	where := ""
	if r.Elsewhere {
		where = " elsewhere"
	}
	return fmt.Sprintf("Known path%s: %s (%s, %s)", where, r.Name, r.Framework, r.Origin)
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

// overlapSignal is the overlap table's Signal column.
func overlapSignal(o TriageOverlap) string {
	under := "-"
	if o.Dominant != nil {
		under = *o.Dominant
	}
	return fmt.Sprintf("%s, share %.1f%% of busy, excl %.0f%% / hid %.0f%%, under %s",
		fmtDur(float64(o.TotalNS)), o.BusySharePct, o.ExclusivePct, o.HiddenPct, under)
}
