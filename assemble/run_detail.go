package assemble

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/target"
	"github.com/tracehouse/tracehouse/vocab"
)

// RunDetailJSON is the JSON shape of `runs RUN`.
type RunDetailJSON struct {
	RunID             int64          `json:"run_id"`
	Label             string         `json:"label"`
	Framework         string         `json:"framework"`
	FrameworkEvidence string         `json:"framework_evidence"`
	Model             string         `json:"model"`
	SourceDir         string         `json:"source_dir"`
	TP                *int64         `json:"tp_size"`
	DP                *int64         `json:"dp_size"`
	EP                *int64         `json:"ep_size"`
	PP                *int64         `json:"pp_size"`
	CUDAGraph         *bool          `json:"cuda_graph"`
	IngestedAt        string         `json:"ingested_at"`
	Tags              []string       `json:"tags"`
	ServerArgsKeys    *int64         `json:"server_args_keys"`
	OverlapSaved      bool           `json:"overlap_saved"`
	Traces            []RunTraceJSON `json:"traces"`
}

// RunTraceJSON is one trace of RunDetailJSON.
type RunTraceJSON struct {
	Path      string `json:"path"`
	Rank      int64  `json:"rank"`
	Stage     string `json:"stage"`
	Role      string `json:"role"`
	GPUEvents int64  `json:"gpu_events"`
}

func nullInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

// RunDetail is what `runs RUN` prints of the run selector names: its
// summary lines and its traces (the table alone is the CSV form), with the
// JSON shape of both.
func RunDetail(ctx context.Context, w *schema.Warehouse, selector string) (doc report.Doc, traces *report.Table, _ error) {
	db := w.DB
	run, err := target.SelectRun(ctx, w, selector)
	if err != nil {
		return report.Doc{}, nil, err
	}
	r, err := queries.RunDetail(ctx, db, run.Label)
	if err != nil {
		return report.Doc{}, nil, err
	}
	if r == nil {
		return report.Doc{}, nil, &target.NoRunError{Label: run.Label, Warehouse: w.Path}
	}
	rows, err := queries.TriageTraces(ctx, db, r.RunID)
	if err != nil {
		return report.Doc{}, nil, err
	}
	at := r.IngestedAt.Format("2006-01-02 15:04:05")
	js := RunDetailJSON{RunID: r.RunID, Label: r.Label, Framework: r.Framework, FrameworkEvidence: r.FrameworkEvidence,
		Model: r.Model, SourceDir: r.SourceDir, TP: nullInt(r.TP), DP: nullInt(r.DP), EP: nullInt(r.EP), PP: nullInt(r.PP),
		IngestedAt: at, Tags: append([]string{}, r.Tags...), ServerArgsKeys: nullInt(r.ServerArgsKeys),
		OverlapSaved: r.OverlapSaved, Traces: []RunTraceJSON{}}
	if r.CUDAGraph.Valid {
		js.CUDAGraph = &r.CUDAGraph.Bool
	}
	fw := vocab.FrameworkName(r.Framework)
	if r.FrameworkEvidence != "" {
		fw += " (" + r.FrameworkEvidence + ")"
	}
	var par []string
	for _, p := range []struct {
		name string
		v    sql.NullInt64
	}{{"tp", r.TP}, {"dp", r.DP}, {"ep", r.EP}, {"pp", r.PP}} {
		if p.v.Valid {
			par = append(par, fmt.Sprintf("%s=%d", p.name, p.v.Int64))
		}
	}
	lines := report.Lines{
		"Framework:   " + fw,
		"Model:       " + r.Model,
		"Parallelism: " + orDash(strings.Join(par, " ")),
		"CUDA graph:  " + cudaGraph(r.CUDAGraph),
		"Source:      " + orDash(r.SourceDir),
		"Ingested:    " + at,
		"Tags:        " + orDash(strings.Join(r.Tags, " ")),
		"Server args: " + map[bool]string{true: strconv.FormatInt(r.ServerArgsKeys.Int64, 10) + " keys (SELECT server_args FROM runs)", false: "none found"}[r.ServerArgsKeys.Valid],
		"Overlap:     " + map[bool]string{true: "saved", false: "not saved (reports compute it; 'tracehouse ingest' saves it)"}[r.OverlapSaved],
	}
	t := &report.Table{Name: "traces", Empty: "(no traces)", Columns: []report.Column{{Name: "Rank", Right: true}, {Name: "Stage", Keep: true},
		{Name: "Role", Keep: true}, {Name: "GPU events", Right: true}, {Name: "Path", Wrap: true}}}
	for _, tr := range rows {
		t.Rows = append(t.Rows, []string{strconv.FormatInt(tr.Rank, 10), vocab.StageName(tr.Stage), tr.Role,
			strconv.FormatInt(tr.GPUEvents, 10), tr.Path})
		js.Traces = append(js.Traces, RunTraceJSON{tr.Path, tr.Rank, tr.Stage, tr.Role, tr.GPUEvents})
	}
	return report.Doc{Blocks: []any{&report.Heading{Level: 1, Text: "Run " + r.Label}, lines, t}, JSON: js}, t, nil
}

func cudaGraph(v sql.NullBool) string {
	switch {
	case !v.Valid:
		return "unknown"
	case v.Bool:
		return "on"
	}
	return "off"
}

// orDash is s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
