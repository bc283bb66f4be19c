package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/tracefile"
)

// PerfettoFixOptions are the parsed flags of `tracehouse perfetto-fix`.
type PerfettoFixOptions struct {
	common
	Format report.Format
	In     string
	Out    string
	Force  bool
}

func newCmdPerfettoFix(f *Factory, runF func(*PerfettoFixOptions) error) *cobra.Command {
	opts := &PerfettoFixOptions{}
	cmd := &cobra.Command{
		Use:   "perfetto-fix IN",
		Short: "Write a copy of a trace that Perfetto loads whole",
		Long: `Write a copy of a torch.profiler trace that the Perfetto UI loads without
dropping events.

Perfetto drops or mis-nests GPU events that overlap on one thread lane
(programmatic dependent launch, merged streams). perfetto-fix spreads the
kernels, memcpys and memsets of each lane over the fewest added lanes (by
start time, reusing a lane once it is free), named after the original
("stream 7 (overlap 1)") and sorted beside it; flow arrows follow the events
they point at. It also repairs what makes Perfetto refuse a whole file:
ts/dur written as strings, unescaped control characters in names, NaN and
Infinity. Everything else is copied unchanged.

The input is read twice, streaming, plain or gzip; memory does not grow with
its size. The output goes to IN's directory as <name>.perfetto.json.gz unless
-o says otherwise (gzip when the name ends in .gz); it is written under a
temporary name and renamed when complete, and an existing file is replaced
only with --force, and never the input or a device, FIFO or other special
file.`,
		Example: `  tracehouse perfetto-fix profiles/run1/decode-TP-0.trace.json.gz
  tracehouse perfetto-fix trace.json -o /tmp/trace.perfetto.json
  tracehouse perfetto-fix --force --format json trace.json.gz`,
		Args: exactArgs(1, "one trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			opts.common = f.common(cmd)
			if opts.Format, err = f.outputFormat(); err != nil {
				return err
			}
			opts.In = args[0]
			if opts.Out == "" {
				opts.Out = tracefile.DefaultFixOutput(opts.In)
			}
			if err := checkOutput(opts.In, opts.Out); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return perfettoFixRun(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Out, "output", "o", "", "write to `FILE` (default: IN's directory, <name>.perfetto.json.gz)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace the output file if it exists")
	return cmd
}

// fixJSON is the JSON shape of perfetto-fix's result; a test pins these names.
type fixJSON struct {
	Input        string `json:"input"`
	Output       string `json:"output"`
	Events       int64  `json:"events"`
	GPUEvents    int64  `json:"gpu_events"`
	Lanes        int    `json:"lanes"`
	SplitLanes   int    `json:"split_lanes"`
	AddedLanes   int    `json:"added_lanes"`
	MaxDepth     int    `json:"max_depth"`
	Moved        int64  `json:"moved_events"`
	MovedFlows   int64  `json:"moved_flows"`
	StringTimes  int64  `json:"string_times"`
	ControlChars int64  `json:"control_chars"`
	BadNumbers   int64  `json:"bad_numbers"`
	Unrepairable int64  `json:"unrepairable"`
	InBytes      int64  `json:"json_bytes_in"`
	OutBytes     int64  `json:"json_bytes_out"`
}

func perfettoFixRun(opts *PerfettoFixOptions) error {
	res, err := tracefile.PerfettoFix(opts.Ctx, opts.In, opts.Out, tracefile.FixOptions{Force: opts.Force})
	if err != nil {
		return err
	}
	lines := report.Lines{fmt.Sprintf("wrote %s: %d events, %d GPU events on %d lanes", opts.Out, res.Events, res.GPUEvents, res.Lanes)}
	if res.SplitLanes > 0 {
		lines = append(lines, fmt.Sprintf("overlaps: %d lane(s) spread over %d added lane(s), deepest %d; %d GPU events and %d flow events moved",
			res.SplitLanes, res.ExtraLanes, res.MaxDepth, res.Moved, res.MovedFlows))
	} else {
		lines = append(lines, "overlaps: none")
	}
	if n := res.Repairs(); n > 0 {
		lines = append(lines, fmt.Sprintf("repaired: %d string time(s), %d control character(s), %d non-JSON number(s)",
			res.StringTimes, res.ControlChars, res.BadNumbers))
	}
	if res.Unrepairable > 0 {
		lines = append(lines, fmt.Sprintf("warning: %d event(s) have a ts or dur that is not a number; Perfetto may drop them", res.Unrepairable))
	}
	t := &report.Table{Name: "perfetto_fix", Columns: []report.Column{{Name: "input"}, {Name: "output"}, {Name: "events", Right: true},
		{Name: "added_lanes", Right: true}, {Name: "moved_events", Right: true}, {Name: "repairs", Right: true}},
		Rows: [][]string{{opts.In, opts.Out, fmt.Sprint(res.Events), fmt.Sprint(res.ExtraLanes), fmt.Sprint(res.Moved), fmt.Sprint(res.Repairs())}}}
	blocks := []any{lines}
	if opts.Format == report.CSV {
		blocks = []any{t}
	}
	return opts.render(opts.Format, report.Doc{Blocks: blocks, JSON: fixJSON{
		Input: opts.In, Output: opts.Out, Events: res.Events, GPUEvents: res.GPUEvents, Lanes: res.Lanes,
		SplitLanes: res.SplitLanes, AddedLanes: res.ExtraLanes, MaxDepth: res.MaxDepth, Moved: res.Moved,
		MovedFlows: res.MovedFlows, StringTimes: res.StringTimes, ControlChars: res.ControlChars,
		BadNumbers: res.BadNumbers, Unrepairable: res.Unrepairable, InBytes: res.InBytes, OutBytes: res.OutBytes}})
}
