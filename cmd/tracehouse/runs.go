package main

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/vocab"
)

// RunsOptions are the parsed flags of `tracehouse runs`.
type RunsOptions struct {
	common
	Format report.Format
	// Run, when set, asks for one run's details.
	Run string
}

func newCmdRuns(f *Factory, runF func(*RunsOptions) error) *cobra.Command {
	opts := &RunsOptions{}
	cmd := &cobra.Command{
		Use:   "runs [RUN]",
		Short: "List the runs in the warehouse, or show one",
		Long: `List runs that hold traces, newest first, with their traces, ranks, stages and
GPU event counts. Given a RUN label: that run's framework (and why), model,
parallelism, CUDA-graph setting, tags, server args, and every trace file with
its rank, stage, role and GPU events.`,
		Example: `  tracehouse runs
  tracehouse runs sglang-llama
  tracehouse runs --format json | jq '.[].label'`,
		Args:              maxArgs(1),
		ValidArgsFunction: completeRuns(f, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			opts.common = f.common(cmd)
			if opts.Format, err = f.outputFormat(); err != nil {
				return err
			}
			if len(args) == 1 {
				opts.Run = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return runsRun(opts)
		},
	}
	return cmd
}

// runJSON is the JSON shape of one run; a test pins these names.
type runJSON struct {
	RunID      int64    `json:"run_id"`
	Label      string   `json:"label"`
	Framework  string   `json:"framework"`
	Model      string   `json:"model"`
	Traces     int64    `json:"traces"`
	Ranks      []int64  `json:"ranks"`
	Stages     []string `json:"stages"`
	GPUEvents  int64    `json:"gpu_events"`
	IngestedAt string   `json:"ingested_at"`
}

func runsRun(opts *RunsOptions) error {
	w, err := opts.Warehouse(opts.Ctx, false)
	if err != nil {
		return err
	}
	defer w.Close()
	if opts.Run != "" {
		return runDetail(opts, w)
	}
	rows, err := queries.Runs(opts.Ctx, w.DB)
	if err != nil {
		return err
	}
	t := &report.Table{Name: "runs", Empty: "no runs: ingest traces with 'tracehouse ingest PATH'",
		Columns: []report.Column{{Name: "Run"}, {Name: "Framework"}, {Name: "Model"}, {Name: "Traces", Right: true},
			{Name: "Ranks"}, {Name: "Stages"}, {Name: "GPU events", Right: true}, {Name: "Ingested"}}}
	js := []runJSON{}
	for _, r := range rows {
		ranks := make([]string, len(r.Ranks))
		for i, n := range r.Ranks {
			ranks[i] = strconv.FormatInt(n, 10)
		}
		at := r.IngestedAt.Format("2006-01-02 15:04:05")
		t.Rows = append(t.Rows, []string{r.Label, r.Framework, r.Model, strconv.FormatInt(r.Traces, 10),
			strings.Join(ranks, ","), strings.Join(displayStages(r.Stages), ","), strconv.FormatInt(r.GPUEvents, 10), at})
		js = append(js, runJSON{r.RunID, r.Label, r.Framework, r.Model, r.Traces, r.Ranks, r.Stages, r.GPUEvents, at})
	}
	return opts.render(opts.Format, report.Doc{Blocks: []any{t}, JSON: js})
}

// displayStages shows prefill the way SGLang users know it.
func displayStages(stages []string) []string {
	out := make([]string, len(stages))
	for i, s := range stages {
		out[i] = vocab.StageName(s)
	}
	return out
}
