package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/ingest"
)

// RmOptions are the parsed flags of `tracehouse rm`.
type RmOptions struct {
	common
	Runs []string
}

func newCmdRm(f *Factory, runF func(*RmOptions) error) *cobra.Command {
	opts := &RmOptions{}
	return &cobra.Command{
		Use:   "rm RUN...",
		Short: "Delete runs with every row they own",
		Long: `Delete the named runs from the warehouse: their traces, kernels, launches, CPU
ops, Python frames, annotations and saved overlap, in one transaction (all the
named runs go, or none do, e.g. when one label names no run). The trace files
on disk are untouched; ingesting them again stores them again.`,
		Example: `  tracehouse rm sglang-llama
  tracehouse rm nightly-2026-11-01 nightly-2026-11-02`,
		Args:              minArgs(1),
		Annotations:       noLake,
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
}

func rmRun(opts *RmOptions) error {
	w, err := opts.Warehouse(opts.Ctx, true)
	if err != nil {
		return err
	}
	defer w.Close()
	removed, err := ingest.RemoveRuns(opts.Ctx, w.DB, opts.Runs)
	var nf *ingest.RunNotFoundError
	if errors.As(err, &nf) {
		return fmt.Errorf("%w in %s: nothing removed ('tracehouse runs' lists them)", err, w.Path)
	}
	if err != nil {
		return err
	}
	for _, r := range removed {
		fmt.Fprintf(opts.IO.ErrOut, "removed run %s (%d trace(s))\n", r.Label, r.Traces)
	}
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
		Use:               "rename OLD NEW",
		Short:             "Give a run a new label",
		Example:           `  tracehouse rename run-3 baseline-h100`,
		Args:              exactArgs(2, "the old and the new label"),
		Annotations:       noLake,
		ValidArgsFunction: completeRuns(f, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.common = f.common(cmd)
			opts.Old, opts.New = args[0], args[1]
			if opts.New == "" {
				return usagef("the new label is empty")
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
	if err := ingest.RenameRun(opts.Ctx, w.DB, opts.Old, opts.New); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "renamed run %s to %s\n", opts.Old, opts.New)
	return nil
}
