package main

import (
	"errors"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/assemble"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/stats"
	"github.com/tracehouse/tracehouse/vocab"
)

// HistoryOptions are the parsed flags of `tracehouse history`.
type HistoryOptions struct {
	common
	Format report.Format
	// The series and the runs (the library's options, filled by the flags).
	assemble.HistoryOptions
	FailOnRegress bool
}

func newCmdHistory(f *Factory, runF func(*HistoryOptions) error) *cobra.Command {
	opts := &HistoryOptions{HistoryOptions: assemble.HistoryOptions{Rule: stats.DefaultChangeRule}}
	var stage string
	var tags []string
	minChange := stats.DefaultChangeRule.MinChange * 100
	cmd := &cobra.Command{
		Use:   "history --kernel PATTERN | --family F | --metric METRIC",
		Short: "One series over many runs, per step: when did this get slow",
		Long: `Follow one figure over runs (README "History: when did it get slow"): the
time per step of the kernels whose short name matches --kernel (an RE2
pattern; matching kernels are summed), of a kernel --family (attention,
gemm, moe, norm, communication, ...), or a step --metric: step_time (the
step's GPU window), busy (GPU busy time), exposed_comm (communication not
hidden under compute), idle (step time minus busy time) or the idle time of
one cause: idle_host_bound, idle_launch_latency, idle_sync,
idle_graph_internal, idle_other (README "Where the GPU waits"). One row per
run and stage, in ingest order (--by TAG: ordered by that tag's value,
numbers in their numeric order, e.g. 0.4.9 before 0.4.10), with the median
per step, its 95% interval (from 6 steps), launches per step and share (of
the summed kernel time for kernels, of the step time for metrics). Runs are
every run, or those carrying every --tag KEY=VALUE; --last N keeps the
newest N of the order.

Change points, marked per stage: ` + wrapText("Change points, marked per stage: "+analysis.RuleText(stats.DefaultChangeRule)+".", 76)[len("Change points, marked per stage: "):] + `
--window and --min-change set the window and the floor. "When did this get
slow" is the first run of the first lasting shift to slower; a change point
the next run does not continue (it is back) is a one-run spike, reported
apart.

A run without the series (no steps in the stage on the rank, or not one
matching kernel: a kernel renamed by a library upgrade) is "absent": a gap
in the table and the chart, never 0 and never a change point. A selection
that holds nothing (no run carries the --tag, none has the --by tag, the
--rank or the --stage, an unknown --family, a --kernel pattern that
matches nothing) is an error.

With --fail-on-regression the exit status is 3 while the newest selected
run stays beyond the level before the last lasting shift to slower in a
stage (that level, the median of the runs before the shift, plus its
threshold: every run of a lasting shift fails, not only its first; a spike
alone fails only while it is the newest run), 1 when the newest run is
absent from a stage's series (cannot decide), else 0; 1 on errors, 2 on
usage errors.`,
		Example: `  tracehouse history --kernel 'BatchDecodeWithPagedKVCache' --stage decode
  tracehouse history --metric step_time --tag branch=main --by commit_date
  tracehouse history --family attention --format csv > attention.csv
  tracehouse history --metric busy --tag branch=main --last 20 \
    --fail-on-regression`,
		Args: maxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.common = f.common(cmd)
			var err error
			if opts.Format, err = f.outputFormat(); err != nil {
				return err
			}
			if err := opts.parse(stage, tags, minChange); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return historyRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Kernel, "kernel", "", "kernels whose short name matches the RE2 `PATTERN` (summed)")
	fl.StringVar(&opts.Family, "family", "", "kernels of `FAMILY` (attention, gemm, moe, norm, communication, ...)")
	fl.StringVar(&opts.Metric, "metric", "", "a step `METRIC`: step_time, busy, exposed_comm, idle or idle_<cause> (host_bound, launch_latency, sync, graph_internal, other)")
	fl.StringVar(&stage, "stage", "all", "stage: prefill (extend), decode, mixed, unknown or all (one series each)")
	fl.Int64Var(&opts.Rank, "rank", 0, "rank whose steps are measured")
	fl.StringArrayVar(&tags, "tag", nil, "only runs carrying tag `key=value` (repeatable: every one)")
	fl.StringVar(&opts.By, "by", "", "order runs by this `TAG`'s value instead of ingest time (runs without it left out)")
	fl.IntVar(&opts.Last, "last", 0, "keep only the newest `N` runs of the order (0 = all)")
	fl.IntVar(&opts.Rule.Window, "window", stats.DefaultChangeRule.Window, "previous runs the rolling median and noise are taken over")
	fl.Float64Var(&minChange, "min-change", minChange, "smallest departure from the rolling median that is a change, in `PERCENT`")
	fl.BoolVar(&opts.KeepEdges, "keep-edges", false, "keep the first and last step of each trace")
	fl.StringVar(&opts.StepsBy, "steps-by", "", "find steps by a kernel that runs once per step: RE2 `PATTERN` on kernel short names")
	fl.BoolVar(&opts.FailOnRegress, "fail-on-regression", false, "exit 3 while the newest run stays beyond the level before a lasting shift to slower")
	_ = cmd.RegisterFlagCompletionFunc("stage", cobra.FixedCompletions(append(slices.Clone(vocab.Stages), "all"), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("metric", cobra.FixedCompletions(queries.HistoryMetrics, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (o *HistoryOptions) parse(stage string, tags []string, minChange float64) error {
	n := 0
	for _, s := range []string{o.Kernel, o.Family, o.Metric} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return usagef("give exactly one of --kernel PATTERN, --family F or --metric %s", strings.Join(queries.HistoryMetrics, "|"))
	}
	if o.Kernel != "" {
		if _, err := regexp.Compile(o.Kernel); err != nil {
			return usagef("--kernel %q: %v", o.Kernel, err)
		}
	}
	if o.Metric != "" && !slices.Contains(queries.HistoryMetrics, o.Metric) {
		return usagef("--metric %q: want %s", o.Metric, strings.Join(queries.HistoryMetrics, ", "))
	}
	st, err := stageFlag(stage)
	if err != nil {
		return err
	}
	o.Stage = st
	if o.Rank < 0 {
		return usagef("--rank %d: want a rank number (0, 1, ...)", o.Rank)
	}
	parsed, err := parseTags(tags)
	if err != nil {
		return err
	}
	for _, t := range tags {
		k, _, _ := strings.Cut(t, "=")
		o.Tags = append(o.Tags, k+"="+parsed[k])
	}
	switch {
	case o.Last < 0:
		return usagef("--last %d: want 0 (all) or more", o.Last)
	case o.Rule.Window < 1:
		return usagef("--window %d: want 1 or more", o.Rule.Window)
	case minChange < 0:
		return usagef("--min-change %v: want a percentage >= 0", minChange)
	}
	o.Rule.MinChange = minChange / 100
	if err := aggregates.CheckStepsBy(o.StepsBy); err != nil {
		return &usageError{err}
	}
	return nil
}

func historyRun(opts *HistoryOptions) error {
	w, err := opts.Warehouse(opts.Ctx, false)
	if err != nil {
		return err
	}
	defer w.Close()
	rep, err := assemble.History(opts.Ctx, w, opts.HistoryOptions)
	if err != nil {
		return err
	}
	return historyPrint(opts, rep)
}

// historyPrint prints a history in the format of opts and decides the exit
// status: what the command does with the report once it is built (the
// goldens print one report in every format this way).
func historyPrint(opts *HistoryOptions, rep *analysis.HistoryReport) error {
	var err error
	if opts.Format == report.CSV {
		err = report.Render(opts.IO.Out, report.CSV, report.Doc{Blocks: []any{report.HistoryCSVTable(rep)}})
	} else {
		err = opts.render(opts.Format, report.HistoryDoc(rep, opts.Format))
	}
	if err != nil {
		return err
	}
	d, line := rep.Decide(opts.FailOnRegress)
	switch d {
	case analysis.Regression:
		opts.message(line)
		return &silentError{exitRegression}
	case analysis.CannotDecide:
		return errors.New(line)
	}
	if line != "" {
		opts.message(line)
	}
	return nil
}

// wrapText breaks s into lines of at most width bytes at spaces.
func wrapText(s string, width int) string {
	var b strings.Builder
	line := 0
	for i, w := range strings.Fields(s) {
		if i > 0 {
			if line+1+len(w) > width {
				b.WriteByte('\n')
				line = 0
			} else {
				b.WriteByte(' ')
				line++
			}
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}
