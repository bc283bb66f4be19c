package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/tracefile"
	"github.com/tracehouse/tracehouse/vocab"
)

// SliceOptions are the parsed flags of `tracehouse slice`.
type SliceOptions struct {
	common
	Format report.Format
	In     string
	Out    string
	Force  bool
	Select tracefile.SliceOptions
}

func newCmdSlice(f *Factory, runF func(*SliceOptions) error) *cobra.Command {
	opts := &SliceOptions{}
	var stage, window, steps string
	var rank int
	cmd := &cobra.Command{
		Use:   "slice IN -o OUT",
		Short: "Write a smaller trace: the chosen steps, stage, window or rank",
		Long: `Write a smaller, valid trace (Perfetto's UI struggles above a few hundred MB)
holding exactly the GPU events (kernels, memcpys, memsets) that pass every
filter given, and what belongs to them: their launches (by correlation),
their cpu_ops (by External id), every CPU event overlapping the kept launches
in time (so Python stacks stay whole), the flow arrows between them, GPU
annotations over the kept kernels, instants and counters in those spans, all
metadata events and top-level keys. Kept events are copied byte for byte.

  --stage S        prefill (extend), decode or mixed: from the file name or
                   directory when they say, else per kernel from the stage
                   annotation around it on the GPU (or around its launch)
  --window A:B     kernels starting in [A, B) from the trace's first event,
                   as durations (1.5s, 200ms, 350us; a bare number is µs);
                   every CPU event and GPU annotation in the window is kept
  --step N[:M]     steps N to M: SGLang step[...] annotations, else vLLM
                   execute_..._context_..., else ProfilerStep#N; numbered
                   from 0 in time order (ProfilerStep#N keeps its N)
  --rank R         the trace must be rank R; in a merged-* trace, the GPU
                   events of device R and the processes that launched them

The input is read twice, streaming, plain or gzip; the output is gzip when
its name ends in .gz, written under a temporary name and renamed when
complete; an existing file is replaced only with --force, and never the input
or a device, FIFO or other special file.`,
		Example: `  tracehouse slice big-TP-0.trace.json.gz -o steps-10-12.json.gz --step 10:12
  tracehouse slice trace.json.gz -o decode.json.gz --stage decode \
    --window 2s:2.5s
  tracehouse slice merged-run.json.gz -o rank3.json.gz --rank 3`,
		Args: exactArgs(1, "one trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			opts.common = f.common(cmd)
			if opts.Format, err = f.outputFormat(); err != nil {
				return err
			}
			opts.In = args[0]
			if opts.Out == "" {
				return usagef("slice needs -o OUT")
			}
			if err := checkOutput(opts.In, opts.Out); err != nil {
				return err
			}
			sel := &opts.Select
			if stage != "" {
				st, ok := vocab.ParseStage(stage)
				if !ok || st == vocab.StageUnknown {
					return usagef("--stage %q: want prefill, decode or mixed", stage)
				}
				sel.Stage = st
			}
			if window != "" {
				w, err := tracefile.ParseWindow(window)
				if err != nil {
					return &usageError{fmt.Errorf("--window: %w", err)}
				}
				sel.Window = &w
			}
			if steps != "" {
				s, err := tracefile.ParseSteps(steps)
				if err != nil {
					return &usageError{fmt.Errorf("--step: %w", err)}
				}
				sel.Steps = &s
			}
			if cmd.Flags().Changed("rank") {
				if rank < 0 {
					return usagef("--rank %d: want 0 or more", rank)
				}
				sel.Rank = &rank
			}
			if sel.Stage == "" && sel.Window == nil && sel.Steps == nil && sel.Rank == nil {
				return usagef("slice needs at least one of --stage, --window, --step, --rank")
			}
			sel.Force = opts.Force
			if runF != nil {
				return runF(opts)
			}
			return sliceRun(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Out, "output", "o", "", "write to `FILE` (.gz for gzip)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace the output file if it exists")
	cmd.Flags().StringVar(&stage, "stage", "", "keep one `STAGE`: prefill, decode or mixed")
	cmd.Flags().StringVar(&window, "window", "", "keep kernels starting in `START:END` from the trace's first event (1.5s:2s)")
	cmd.Flags().StringVar(&steps, "step", "", "keep steps `N[:M]` (from 0, in time order)")
	cmd.Flags().IntVar(&rank, "rank", 0, "keep rank `R`")
	_ = cmd.RegisterFlagCompletionFunc("stage", cobra.FixedCompletions([]string{vocab.Prefill, vocab.Decode, vocab.Mixed}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// sliceJSON is the JSON shape of slice's result; a test pins these names.
type sliceJSON struct {
	Input       string `json:"input"`
	Output      string `json:"output"`
	Events      int64  `json:"events"`
	Kept        int64  `json:"kept_events"`
	GPUEvents   int64  `json:"gpu_events"`
	KeptGPU     int64  `json:"kept_gpu_events"`
	Steps       int    `json:"steps"`
	StepSource  string `json:"step_source"`
	StageSource string `json:"stage_source"`
	GPUStartNS  int64  `json:"gpu_start_ns"`
	GPUEndNS    int64  `json:"gpu_end_ns"`
	InBytes     int64  `json:"json_bytes_in"`
	OutBytes    int64  `json:"json_bytes_out"`
}

func sliceRun(opts *SliceOptions) error {
	res, err := tracefile.Slice(opts.Ctx, opts.In, opts.Out, opts.Select)
	if err != nil {
		return err
	}
	lines := report.Lines{fmt.Sprintf("wrote %s: %d of %d events, %d of %d GPU events (%.1f of %.1f MB of JSON)",
		opts.Out, res.Kept, res.Events, res.KeptGPU, res.GPUEvents, float64(res.OutBytes)/1e6, float64(res.InBytes)/1e6)}
	if res.StepSource != "" {
		lines = append(lines, fmt.Sprintf("steps: %d, from %s annotations", res.Steps, res.StepSource))
	}
	if res.StageSource != "" {
		lines = append(lines, "stage from: "+res.StageSource)
	}
	t := &report.Table{Name: "slice", Columns: []report.Column{{Name: "input"}, {Name: "output"}, {Name: "events", Right: true},
		{Name: "kept_events", Right: true}, {Name: "kept_gpu_events", Right: true}},
		Rows: [][]string{{opts.In, opts.Out, fmt.Sprint(res.Events), fmt.Sprint(res.Kept), fmt.Sprint(res.KeptGPU)}}}
	blocks := []any{lines}
	if opts.Format == report.CSV {
		blocks = []any{t}
	}
	return opts.render(opts.Format, report.Doc{Blocks: blocks, JSON: sliceJSON{
		Input: opts.In, Output: opts.Out, Events: res.Events, Kept: res.Kept, GPUEvents: res.GPUEvents, KeptGPU: res.KeptGPU,
		Steps: res.Steps, StepSource: res.StepSource, StageSource: res.StageSource, GPUStartNS: res.GPUStart,
		GPUEndNS: res.GPUEnd, InBytes: res.InBytes, OutBytes: res.OutBytes}})
}
