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
	// Tags keeps the runs carrying every one of them ("key=value").
	Tags []string
}

func newCmdRuns(f *Factory, runF func(*RunsOptions) error) *cobra.Command {
	opts := &RunsOptions{}
	var tags []string
	cmd := &cobra.Command{
		Use:   "runs [RUN]",
		Short: "List the runs in the warehouse, or show one",
		Long: `List runs that hold traces, newest first, with their traces, ranks, stages,
GPU event counts, source formats (kineto: torch.profiler traces; nsys:
Nsight Systems exports) and tags; --tag KEY=VALUE (repeatable) keeps the runs
carrying every tag given. Given a RUN (a label, @latest, @latest~N or
tag:KEY=VALUE): that run's framework (and why),
model, parallelism, CUDA-graph setting, tags, server args, and every trace
file with its rank, stage, role and GPU events.

Tags come from 'ingest --tag', 'capture --tag' and 'tracehouse tag'.`,
		Example: `  tracehouse runs
  tracehouse runs --tag branch=main --tag gpu=h100
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
			parsed, err := parseTags(tags)
			if err != nil {
				return err
			}
			for _, t := range tags {
				k, _, _ := strings.Cut(t, "=")
				opts.Tags = append(opts.Tags, k+"="+parsed[k])
			}
			if opts.Run != "" && len(opts.Tags) > 0 {
				return usagef("--tag filters the list of runs: give it without RUN")
			}
			if runF != nil {
				return runF(opts)
			}
			return runsRun(opts)
		},
	}
	cmd.Flags().StringArrayVar(&tags, "tag", nil, "only runs carrying tag `key=value` (repeatable: every one)")
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
	Formats    []string `json:"source_formats"`
	Tags       []string `json:"tags"`
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
	rows, err := queries.RunsTagged(opts.Ctx, w.DB, opts.Tags)
	if err != nil {
		return err
	}
	empty := "no runs: ingest traces with 'tracehouse ingest PATH'"
	if len(opts.Tags) > 0 {
		empty = "no run carries " + strings.Join(opts.Tags, " and ")
	}
	t := &report.Table{Name: "runs", Empty: empty,
		// Labels and stages are typed back as arguments: never cut; what
		// identifies less (format, ingest time, tags) goes under the row
		// when the line is short.
		Columns: []report.Column{{Name: "Run", Keep: true}, {Name: "Framework", Keep: true}, {Name: "Model", Keep: true, Detail: 1},
			{Name: "Traces", Right: true}, {Name: "Ranks", Wrap: true}, {Name: "Stages", Keep: true},
			{Name: "GPU events", Short: "Events", Right: true}, {Name: "Format", Keep: true, Detail: 1}, {Name: "Ingested", Keep: true, Detail: 1},
			{Name: "Tags", Wrap: true, Detail: 2}}}
	js := []runJSON{}
	for _, r := range rows {
		ranks := make([]string, len(r.Ranks))
		for i, n := range r.Ranks {
			ranks[i] = strconv.FormatInt(n, 10)
		}
		at := r.IngestedAt.Format("2006-01-02 15:04:05")
		t.Rows = append(t.Rows, []string{r.Label, r.Framework, r.Model, strconv.FormatInt(r.Traces, 10),
			strings.Join(ranks, ","), strings.Join(displayStages(r.Stages), ","), strconv.FormatInt(r.GPUEvents, 10), strings.Join(r.Formats, ","), at,
			strings.Join(r.Tags, " ")})
		js = append(js, runJSON{r.RunID, r.Label, r.Framework, r.Model, r.Traces, r.Ranks, r.Stages, r.GPUEvents, at, r.Formats, r.Tags})
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
