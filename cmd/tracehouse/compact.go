package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/lake"
	"github.com/tracehouse/tracehouse/schema"
)

// CompactOptions are the parsed flags of `tracehouse compact`.
type CompactOptions struct {
	common
	Lake    string
	ChunkMB int64
	Grace   time.Duration
	Engine  schema.Options
}

func newCmdCompact(f *Factory, runF func(*CompactOptions) error) *cobra.Command {
	opts := &CompactOptions{}
	cmd := &cobra.Command{
		Use:   "compact --lake DIR",
		Short: "Merge a Parquet lake's small files so that reading it stays fast",
		Long: `Merge the files of the lake's traces into a few large files per table, so
that commands reading the lake (--lake DIR) open a handful of files instead
of a dozen per trace: every trace writes its own small files, and a lake of
a thousand runs holds fifteen thousand.

The merged files are a new generation under DIR/_tracehouse/merged/,
published at once when its manifest appears; readers then read the traces
it holds from it and every later trace from its own files, each trace
exactly once. The traces' own files stay (Spark, Trino and views.sql read
them, and a reader falls back on them if a merged file is damaged). Writers
need not stop: a trace committed meanwhile is merged by the next compact.
A killed compact leaves the previous generation in use. Running it again
merges only the traces committed since; with none, it changes nothing.
Files of a generation that has been replaced are removed by a later
compact once --grace has passed (commands still reading it finish first).

Run it after a batch of ingests, e.g. nightly.`,
		Example: `  tracehouse compact --lake /shared/lake
  tracehouse compact --lake /shared/lake --grace 0   # no command is reading the lake`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.common = f.common(cmd)
			opts.Lake = f.lake
			engine, err := f.engine()
			if err != nil {
				return err
			}
			opts.Engine = engine
			if opts.Lake == "" {
				return usagef("compact merges a lake's files: add --lake DIR (a warehouse file is compacted by rm)")
			}
			if opts.ChunkMB < 1 {
				return usagef("--chunk-mb %d: want 1 or more", opts.ChunkMB)
			}
			if opts.Grace < 0 {
				return usagef("--grace %s: want 0 or more", opts.Grace)
			}
			if runF != nil {
				return runF(opts)
			}
			return compactRun(opts)
		},
	}
	cmd.Flags().Int64Var(&opts.ChunkMB, "chunk-mb", lake.DefaultChunkBytes>>20, "MB of the traces' own files merged into one file per table")
	cmd.Flags().DurationVar(&opts.Grace, "grace", lake.DefaultGrace, "how long a replaced generation's files stay for commands reading it (0: removed at once)")
	return cmd
}

func compactRun(opts *CompactOptions) error {
	res, err := lake.Compact(opts.Ctx, opts.Lake, lake.CompactOptions{ChunkBytes: opts.ChunkMB << 20, Grace: opts.Grace, Engine: opts.Engine})
	if err != nil {
		return err
	}
	var lines []string
	for _, d := range res.Damaged {
		lines = append(lines, fmt.Sprintf("warning: lake %s: %s: run %s is not merged; write its traces again ('tracehouse ingest --lake' of its files, or 'tracehouse export --lake' from a warehouse holding it) to repair it",
			opts.Lake, d, d.Run))
	}
	var summary string
	switch {
	case res.Raced:
		summary = fmt.Sprintf("another compact published generation %d of %s first; this one changed nothing (run it again to merge what that one left)",
			res.Generation+1, opts.Lake)
	case res.Published:
		summary = fmt.Sprintf("merged %d trace(s) into generation %d of %s: %d trace(s) in %d chunk(s), %d read from their own files",
			res.Merged, res.Generation, opts.Lake, res.Covered, res.Chunks, res.Left)
	default:
		summary = fmt.Sprintf("nothing new to merge in %s: generation %d holds %d trace(s) in %d chunk(s), %d read from their own files",
			opts.Lake, res.Generation, res.Covered, res.Chunks, res.Left)
	}
	if res.Removed > 0 {
		summary += fmt.Sprintf("; removed %d file(s) of replaced generations", res.Removed)
	}
	opts.message(append(lines, summary)...)
	return nil
}
