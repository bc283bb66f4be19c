package main

import (
	"errors"
	"slices"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/assemble"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/target"
	"github.com/tracehouse/tracehouse/vocab"
)

// CompareOptions are the parsed flags of `tracehouse compare`.
type CompareOptions struct {
	common
	Format report.Format
	// Base and Candidate are run selectors or PATHs.
	Base, Candidate string
	// What the comparison reads and how it decides (the library's
	// options, filled by the flags).
	assemble.CompareOptions
	FailOnRegress bool
	Out           string
}

func newCmdCompare(f *Factory, runF func(*CompareOptions) error) *cobra.Command {
	opts := &CompareOptions{}
	var stage, rank string
	cmd := &cobra.Command{
		Use:         "compare BASE CANDIDATE",
		Annotations: creates,
		Short:       "What changed between two runs, is it real, should CI fail",
		Long: `Compare two runs step by step (README "Comparing runs"): per stage, the
step time, kernel time, GPU busy, idle and exposed-communication time per
step (median per side, 95% interval, two-sided Mann-Whitney U test), where
the step-time delta went (by kernel family, overlap and idle: the rows add
up exactly), the kernel table with same/new/gone/renamed buckets (p-values
adjusted by Benjamini-Hochberg across the stage's kernels; "~" = not
significant), overlap and fusion-status changes, and a verdict.

A sample is one step (a kernel's summed time in that step), never one
launch, so runs with different numbers of steps compare. Steps come from
SGLang step[...], vLLM execute_... or ProfilerStep#N annotations, a
repeating GPU annotation, or --steps-by KERNEL_PATTERN; the first and last
step of a trace with more than four are left out (--keep-edges keeps them).
With fewer than 4 steps on a side nothing can be significant at 0.05: the
report says "too few steps to test" and the stage cannot be decided, unless
--allow-untested lets the thresholds alone decide it (marked). A stage with
steps on one side only is not compared (a stage that did not land is not
an improvement): it cannot be decided either.

A row is a regression only when it is significant AND practically large:
the step time or busy time per step grows by more than --threshold, or a
kernel with >= 1% share grows by more than --kernel-threshold and by more
than --min-delta-us per step. The mirror is an improvement. Significant
rows under the thresholds make the verdict "no regression" and are named
in it; the thresholds in force are printed in every format. A
communication kernel's time includes waiting for the other ranks: its
change gates only when exposed communication or step time moved the same
way too, and its row says which.

BASE and CANDIDATE are run labels, @latest (most recently ingested),
@latest~N (N runs before it), tag:KEY=VALUE (the latest run with that tag),
or PATHs (ingested first). Exit status with --fail-on-regression: 3 on a
regression verdict (a tested stage regressed), 1 when a stage cannot be
decided (and nothing regressed), else 0; 1 on errors; 2 on usage errors and,
with --strict, when the runs are not comparable (GPU, framework, model,
parallel sizes, CUDA graphs, batch size or tokens per step differ); --strict
alone also exits 1 when a stage cannot be decided.`,
		Example: `  tracehouse compare nightly-0412 nightly-0413
  tracehouse compare tag:baseline=true @latest --fail-on-regression
  tracehouse compare base/ cand/ --db :memory: --stage decode
  tracehouse compare run-a run-b --rank all --format json | jq .verdict
  tracehouse compare run-a run-b --steps-by 'lm_head|logits' \
    --format csv --out cmp/`,
		Args: exactArgs(2, "BASE and CANDIDATE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.common = f.common(cmd)
			opts.Base, opts.Candidate = args[0], args[1]
			var err error
			if opts.Format, err = f.outputFormat(); err != nil {
				return err
			}
			if err := opts.parse(cmd, stage, rank); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return compareRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&stage, "stage", "all", "stage to compare: prefill (extend), decode, mixed, unknown or all")
	fl.StringVar(&rank, "rank", "0", "rank to compare, or all (each rank compared, the straggler named)")
	def := assemble.DefaultGates()
	fl.Float64Var(&opts.Threshold, "threshold", def.Threshold, "step or busy time growth per step that matters, in `PERCENT`")
	fl.Float64Var(&opts.KernelThreshold, "kernel-threshold", def.KernelThreshold, "kernel time growth per step that matters, in `PERCENT` (kernels with >= 1% share)")
	fl.Float64Var(&opts.MinDeltaUS, "min-delta-us", def.MinDeltaUS, "and a kernel must grow by more than this many `MICROSECONDS` per step")
	fl.Float64Var(&opts.Alpha, "alpha", def.Alpha, "significance level (false discovery rate across a stage's kernel rows)")
	fl.BoolVar(&opts.FailOnRegress, "fail-on-regression", false, "exit 3 when the verdict is a regression, 1 when a stage cannot be decided")
	fl.BoolVar(&opts.AllowUntested, "allow-untested", false, "let the thresholds alone decide a stage with too few steps to test (fewer than 4 a side)")
	fl.BoolVar(&opts.Strict, "strict", false, "refuse (exit 2) runs that are not comparable instead of warning")
	fl.BoolVar(&opts.KeepEdges, "keep-edges", false, "keep the first and last step of each trace")
	fl.StringVar(&opts.StepsBy, "steps-by", "", "find steps by a kernel that runs once per step: RE2 `PATTERN` on kernel short names")
	fl.StringVar(&opts.Out, "out", "", "with --format csv: write one CSV file per table into `DIR`")
	_ = cmd.RegisterFlagCompletionFunc("stage", cobra.FixedCompletions(append(slices.Clone(vocab.Stages), "all"), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (o *CompareOptions) parse(cmd *cobra.Command, stage, rank string) error {
	var err error
	if o.Stage, err = stageFlag(stage); err != nil {
		return err
	}
	o.RankSet = cmd.Flags().Changed("rank")
	if o.Rank, o.RankAll, err = rankFlag(rank); err != nil {
		return err
	}
	switch {
	case o.Threshold < 0:
		return usagef("--threshold %v: want a percentage >= 0", o.Threshold)
	case o.KernelThreshold < 0:
		return usagef("--kernel-threshold %v: want a percentage >= 0", o.KernelThreshold)
	case o.MinDeltaUS < 0:
		return usagef("--min-delta-us %v: want 0 or more", o.MinDeltaUS)
	case o.Alpha <= 0 || o.Alpha >= 1:
		return usagef("--alpha %v: want a level between 0 and 1", o.Alpha)
	}
	if err := aggregates.CheckStepsBy(o.StepsBy); err != nil {
		return &usageError{err}
	}
	if o.Format == report.CSV && o.Out == "" {
		return usagef("--format csv writes one file per table: add --out DIR")
	}
	if o.Out != "" && o.Format != report.CSV {
		return usagef("--out writes CSV files: add --format csv")
	}
	return nil
}

func compareRun(opts *CompareOptions) error {
	cat, _ := catalogFor("") // (the embedded catalog has no error)
	write, labels := target.Needs(opts.Base, opts.Candidate)
	if write {
		cat.Prefetch()
	}
	notice := func(msg string) { opts.message("note: " + oneLine(msg)) }
	w, err := target.Open(opts.Ctx, opts.warehouseFor(labels), write, cat, notice)
	if err != nil {
		return err
	}
	defer w.Close()

	rep, ingestErr, err := compareArgs(opts.common, w, cat, opts.Base, opts.Candidate, opts.CompareOptions)
	if err != nil {
		return err
	}
	if err := printCompare(opts.common, opts.Format, opts.Out, rep); err != nil {
		return err
	}
	if ingestErr != nil {
		return ingestErr
	}
	switch d, why := rep.Decide(opts.FailOnRegress, opts.Strict); d {
	case analysis.Regression:
		return &silentError{exitRegression}
	case analysis.CannotDecide:
		return errors.New(why)
	}
	return nil
}
