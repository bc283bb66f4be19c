package main

import (
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

// runDetailJSON is the JSON shape of `runs RUN`.
type runDetailJSON struct {
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
	Traces            []traceRowJSON `json:"traces"`
}

type traceRowJSON struct {
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

func runDetail(opts *RunsOptions, w *schema.Warehouse) error {
	db := w.DB
	run, err := target.SelectRun(opts.Ctx, w, opts.Run)
	if err != nil {
		return err
	}
	r, err := queries.RunDetail(opts.Ctx, db, run.Label)
	if err != nil {
		return err
	}
	if r == nil {
		return &target.NoRunError{Label: run.Label, Warehouse: w.Path}
	}
	traces, err := queries.TriageTraces(opts.Ctx, db, r.RunID)
	if err != nil {
		return err
	}
	at := r.IngestedAt.Format("2006-01-02 15:04:05")
	js := runDetailJSON{RunID: r.RunID, Label: r.Label, Framework: r.Framework, FrameworkEvidence: r.FrameworkEvidence,
		Model: r.Model, SourceDir: r.SourceDir, TP: nullInt(r.TP), DP: nullInt(r.DP), EP: nullInt(r.EP), PP: nullInt(r.PP),
		IngestedAt: at, Tags: append([]string{}, r.Tags...), ServerArgsKeys: nullInt(r.ServerArgsKeys),
		OverlapSaved: r.OverlapSaved, Traces: []traceRowJSON{}}
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
	for _, tr := range traces {
		t.Rows = append(t.Rows, []string{strconv.FormatInt(tr.Rank, 10), vocab.StageName(tr.Stage), tr.Role,
			strconv.FormatInt(tr.GPUEvents, 10), tr.Path})
		js.Traces = append(js.Traces, traceRowJSON{tr.Path, tr.Rank, tr.Stage, tr.Role, tr.GPUEvents})
	}
	doc := report.Doc{Blocks: []any{&report.Heading{Level: 1, Text: "Run " + r.Label}, lines, t}, JSON: js}
	if opts.Format == report.CSV {
		doc.Blocks = []any{t}
	}
	return opts.render(opts.Format, doc)
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
