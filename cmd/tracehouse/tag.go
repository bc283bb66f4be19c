package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/target"
)

// TagOptions are the parsed flags of `tracehouse tag`.
type TagOptions struct {
	common
	// Run is a run label or a selector (@latest, @latest~N, tag:KEY=VALUE).
	Run  string
	Set  map[string]string
	Rm   []string
	Move bool
}

func newCmdTag(f *Factory, runF func(*TagOptions) error) *cobra.Command {
	opts := &TagOptions{}
	cmd := &cobra.Command{
		Use:   "tag RUN KEY=VALUE... | tag RUN --rm KEY",
		Short: "Attach tags to a run, or remove them (baselines are tags)",
		Long: `Set tags (KEY=VALUE: version, commit, branch, batch size, GPU, ...) on a run,
or remove them with --rm KEY (repeatable); both in one go are applied as
one change (removals first). A key already set takes the new value.
'tracehouse runs' shows tags and filters with --tag KEY=VALUE; compare and
history select runs with tag:KEY=VALUE.

A baseline is a tag: compare tag:baseline=true @latest compares the latest
run carrying baseline=true with the newest run. --move takes the keys being
set off every other run first, so exactly one run carries them: without it
an older run tagged baseline=true does not become the baseline while a
newer one still carries the tag.

RUN is a run label, @latest, @latest~N or tag:KEY=VALUE (never a path).`,
		Example: `  tracehouse tag nightly-0413 commit=1a2b3c branch=main
  tracehouse tag nightly-0413 baseline=true --move
  tracehouse tag @latest --rm branch
  tracehouse tag tag:baseline=true --rm baseline`,
		Args:              minArgs(1),
		Annotations:       writes,
		ValidArgsFunction: completeRuns(f, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.common = f.common(cmd)
			opts.Run = args[0]
			if err := opts.parse(args[1:]); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return tagRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Rm, "rm", nil, "remove tag `KEY` (repeatable)")
	fl.BoolVar(&opts.Move, "move", false, "take the keys being set off every other run (one baseline)")
	return cmd
}

func (o *TagOptions) parse(pairs []string) error {
	o.Set = map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return usagef("%q: want KEY=VALUE (remove a tag with --rm KEY)", p)
		}
		if _, dup := o.Set[k]; dup {
			return usagef("tag %q given twice", k)
		}
		o.Set[k] = v
	}
	for _, k := range o.Rm {
		if k == "" || strings.Contains(k, "=") {
			return usagef("--rm %q: want a KEY", k)
		}
		if _, both := o.Set[k]; both {
			return usagef("tag %q is both set and removed", k)
		}
	}
	if len(o.Set) == 0 && len(o.Rm) == 0 {
		return usagef("nothing to change: give KEY=VALUE or --rm KEY ('tracehouse runs' shows tags)")
	}
	if o.Move && len(o.Set) == 0 {
		return usagef("--move moves the keys being set: give KEY=VALUE")
	}
	return nil
}

func tagRun(opts *TagOptions) error {
	w, err := opts.Warehouse(opts.Ctx, true)
	if err != nil {
		return err
	}
	defer w.Close()
	run, err := target.SelectRun(opts.Ctx, w, opts.Run)
	if err != nil {
		return err
	}
	res, err := ingest.TagRun(opts.Ctx, w.DB, run.Label, opts.Set, opts.Rm, opts.Move)
	var nf *ingest.RunNotFoundError
	if errors.As(err, &nf) {
		return fmt.Errorf("%w in %s ('tracehouse runs' lists them)", err, w.Path)
	}
	if err != nil {
		return err
	}
	// The lines wrap to the text width like every message (a run's tags
	// can be long: commit hashes, notes).
	var lines []string
	for _, k := range res.Missing {
		lines = append(lines, fmt.Sprintf("note: run %s has no tag %s", run.Label, k))
	}
	if len(res.MovedFrom) > 0 {
		lines = append(lines, "moved from "+strings.Join(res.MovedFrom, ", "))
	}
	tags := strings.Join(res.Tags, " ")
	if tags == "" {
		tags = "(no tags)"
	}
	opts.message(append(lines, fmt.Sprintf("run %s: %s", run.Label, tags))...)
	return nil
}
