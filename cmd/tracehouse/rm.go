package main

import (
	"fmt"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/target"
)

// RmOptions are the parsed flags of `tracehouse rm`.
type RmOptions struct {
	common
	Runs      []string
	NoCompact bool
}

func newCmdRm(f *Factory, runF func(*RmOptions) error) *cobra.Command {
	opts := &RmOptions{}
	cmd := &cobra.Command{
		Use:   "rm RUN...",
		Short: "Delete runs with every row they own",
		Long: `Delete the named runs from the warehouse: their traces, kernels, launches, CPU
ops, Python frames, annotations and saved overlap, in one transaction (all the
named runs go, or none do, e.g. when one label names no run). The trace files
on disk are untouched; ingesting them again stores them again. RUN is a run
label, @latest, @latest~N or tag:KEY=VALUE.

The warehouse file is then compacted: DuckDB keeps the space of deleted rows
(the file grew after an rm), so rm copies what is left into a new file that
replaces the old one, and says how much it reclaimed. That rewrites the whole
warehouse (seconds for hundreds of MB); --no-compact skips it, and the space
is reused by later ingests.`,
		Example: `  tracehouse rm sglang-llama
  tracehouse rm @latest
  tracehouse rm --no-compact nightly-2026-11-01 nightly-2026-11-02`,
		Args:              minArgs(1),
		Annotations:       writes,
		ValidArgsFunction: completeRuns(f, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.common = f.common(cmd)
			opts.Runs = args
			if runF != nil {
				return runF(opts)
			}
			return rmRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.NoCompact, "no-compact", false, "leave the file as it is (the space of the removed rows is reused by later ingests)")
	return cmd
}

func rmRun(opts *RmOptions) error {
	w, err := opts.Warehouse(opts.Ctx, true)
	if err != nil {
		return err
	}
	compacting := false
	defer func() {
		if !compacting {
			w.Close()
		}
	}()
	runs, err := target.SelectRuns(opts.Ctx, w, opts.Runs)
	if err != nil {
		return fmt.Errorf("%w: nothing removed", err)
	}
	labels := make([]string, len(runs))
	for i, r := range runs {
		labels[i] = r.Label
	}
	removed, err := ingest.RemoveRuns(opts.Ctx, w.DB, labels)
	if err != nil {
		return err
	}
	for _, r := range removed {
		opts.message(fmt.Sprintf("removed run %s (%d trace(s))", r.Label, r.Traces))
	}
	if opts.NoCompact || w.Path == "" || w.Path == schema.Memory {
		return nil
	}
	compacting = true // Compact closes w
	c, err := schema.Compact(opts.Ctx, w)
	if err != nil {
		return fmt.Errorf("the runs are removed, but %w", err)
	}
	opts.message(fmt.Sprintf("compacted %s: %s -> %s (%s reclaimed)", w.Path,
		humanize.Bytes(uint64(c.Before)), humanize.Bytes(uint64(c.After)), humanize.Bytes(uint64(max(c.Before-c.After, 0)))))
	return nil
}

// RenameOptions are the parsed flags of `tracehouse rename`.
type RenameOptions struct {
	common
	Old, New string
}

func newCmdRename(f *Factory, runF func(*RenameOptions) error) *cobra.Command {
	opts := &RenameOptions{}
	return &cobra.Command{
		Use:   "rename OLD NEW",
		Short: "Give a run a new label",
		Long: `Give a run a new label. OLD is a run label, @latest, @latest~N or
tag:KEY=VALUE; NEW never begins with @ or tag: (those are selectors).`,
		Example: `  tracehouse rename run-3 baseline-h100
  tracehouse rename @latest nightly-0413`,
		Args:              exactArgs(2, "the old and the new label"),
		Annotations:       writes,
		ValidArgsFunction: completeRuns(f, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.common = f.common(cmd)
			opts.Old, opts.New = args[0], args[1]
			if err := ingest.CheckLabel(opts.New); err != nil {
				return &usageError{err}
			}
			if runF != nil {
				return runF(opts)
			}
			return renameRun(opts)
		},
	}
}

func renameRun(opts *RenameOptions) error {
	w, err := opts.Warehouse(opts.Ctx, true)
	if err != nil {
		return err
	}
	defer w.Close()
	run, err := target.SelectRun(opts.Ctx, w, opts.Old)
	if err != nil {
		return err
	}
	if err := ingest.RenameRun(opts.Ctx, w.DB, run.Label, opts.New); err != nil {
		return err
	}
	opts.message(fmt.Sprintf("renamed run %s to %s", run.Label, opts.New))
	return nil
}
