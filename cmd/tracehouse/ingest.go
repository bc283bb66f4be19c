package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/lake"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/target"
	"github.com/tracehouse/tracehouse/vocab"
)

// IngestOptions are the parsed flags of `tracehouse ingest`.
type IngestOptions struct {
	common
	Paths     []string
	Run       string
	Append    bool
	Framework string
	Stage     string
	Role      string
	Tags      map[string]string
	Jobs      int
	Replace   bool
	// Lake is the lake directory to ingest into (--lake), "" for the warehouse.
	Lake string
	// Engine sets up the in-memory database a lake ingest goes through.
	Engine func() (schema.Options, error)
}

func newCmdIngest(f *Factory, runF func(*IngestOptions) error) *cobra.Command {
	opts := &IngestOptions{}
	var tags []string
	cmd := &cobra.Command{
		Use:         "ingest PATH...",
		Annotations: creates,
		Short:       "Load trace files and directories into the warehouse",
		Long: `Load torch.profiler Chrome traces (*.json, *.json.gz) and Nsight Systems
profiles (SQLite exports *.sqlite; *.nsys-rep reports when nsys is on PATH,
exported once into <warehouse>.nsys-cache) into the warehouse, or with
--lake DIR straight into a Parquet lake (no warehouse file).

Directories are searched recursively. Each file lands whole or not at all;
a file already stored (same content) is skipped; damaged files are reported
one line each and the others still load. The exit status is 1 when any file
failed.

Runs are named after the nearest directory holding a server_args.json (its
parent when that is a timestamp directory), else the first directory below the
path given, else the path itself; stage directories (prefill, extend,
decode) and a profiles directory above them are never the run (srtctl's
logs/<job>/profiles/{prefill,decode}/ is run <job>). --run names it
yourself. A run is one capture: a later ingest never adds to an earlier run
(a directory name already taken gets the next free label, traces-2, and a
note says so; a --run label already taken is refused) unless --append says
so. Ingesting the same directory again (every file of its run still there)
finishes an interrupted ingest or adds the files it gained.

With --lake, each trace becomes its own files, named by its content hash:
any number of ingest processes, on any number of machines, may write into one
shared directory at once (no lock; a trace appears whole or not at all), and
re-ingesting a file is a no-op. Read the lake with --lake on runs, sql,
triage, compare.`,
		Example: `  tracehouse ingest profiles/
  tracehouse ingest --run llama-tp8-nightly --tag date=2026-11-29 \
    /data/traces/*.json.gz
  tracehouse ingest --run llama-tp8-nightly --append /data/traces/late-rank/
  tracehouse ingest --stage decode --framework sglang decode-trace.json
  nsys export --type sqlite --output decode.sqlite decode.nsys-rep &&
    tracehouse ingest decode.sqlite
  tracehouse ingest --lake /shared/lake /data/traces/node-17/`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.common = f.common(cmd)
			opts.Paths = args
			opts.Lake = f.lake
			opts.Engine = f.engine
			if opts.Append && opts.Run == "" {
				return usagef("--append adds to a run you name: add --run LABEL")
			}
			if opts.Lake != "" && opts.Replace {
				return usagef("--replace: a lake's traces never change; write a new lake or use a warehouse")
			}
			var err error
			if opts.Tags, err = parseTags(tags); err != nil {
				return err
			}
			if err := opts.ingestOptions().Validate(); err != nil {
				return optionUsage(err)
			}
			if opts.Jobs < 0 {
				return usagef("--jobs %d: want 1 or more", opts.Jobs)
			}
			if runF != nil {
				return runF(opts)
			}
			return ingestRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Run, "run", "", "label every file's run with `LABEL`")
	cmd.Flags().BoolVar(&opts.Append, "append", false, "add the files to the existing run of --run (else a label an earlier capture holds is refused)")
	cmd.Flags().StringVar(&opts.Framework, "framework", "", "framework of the traces: "+strings.Join(vocab.Frameworks, ", ")+" (default: detect)")
	cmd.Flags().StringVar(&opts.Stage, "stage", "", "stage of the traces: prefill, decode or mixed (default: detect)")
	cmd.Flags().StringVar(&opts.Role, "role", "", "two-trace role: mapping (CUDA graphs off) or formal (default: detect)")
	cmd.Flags().StringArrayVar(&tags, "tag", nil, "attach `key=value` to the run (repeatable)")
	cmd.Flags().IntVarP(&opts.Jobs, "jobs", "j", 0, "files to load in parallel (default: CPUs)")
	cmd.Flags().BoolVar(&opts.Replace, "replace", false, "re-ingest files already stored")
	_ = cmd.RegisterFlagCompletionFunc("framework", cobra.FixedCompletions(vocab.Frameworks, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("stage", cobra.FixedCompletions(ingest.Stages, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("role", cobra.FixedCompletions(vocab.Roles, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// optionUsage reports the library's option errors as a usage error naming
// the flags: each of ingest's flags is named after its option.
func optionUsage(err error) error {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = slices.Clone(j.Unwrap())
	}
	for i, e := range errs {
		var oe *ingest.OptionError
		if errors.As(e, &oe) {
			errs[i] = fmt.Errorf("--%s %q: want one of %s", oe.Option, oe.Value, strings.Join(oe.Want, ", "))
		}
	}
	return &usageError{errors.Join(errs...)}
}

// ingestOptions are the library's options for these flags.
func (o *IngestOptions) ingestOptions() ingest.Options {
	return ingest.Options{Run: o.Run, Append: o.Append, Framework: o.Framework, Stage: o.Stage, Role: o.Role, Tags: o.Tags,
		Jobs: o.Jobs, Replace: o.Replace}
}

func ingestRun(opts *IngestOptions) error {
	if opts.Lake != "" {
		return ingestLakeRun(opts)
	}
	cat := catalog.LazyDefault()
	cat.Prefetch() // installed by the finish: parsed while the files load
	w, err := opts.Warehouse(opts.Ctx, true)
	if err != nil {
		return err
	}
	defer w.Close()
	// On a machine of two cores the whole command runs DuckDB on the
	// calling threads (ingest.CallersOnly), not only the load and the
	// finish's saves, which set it and put the worker back after: the
	// triage reports the finish saves last ran beside a worker the
	// callers spun on, and the worker was stopped and started twice. The
	// warehouse closes with the command, so nothing is put back.
	if _, err := ingest.CallersOnly(opts.Ctx, w.DB); err != nil {
		return err
	}
	ctx, iopt, done := withProgress(opts.Ctx, opts.common, opts.ingestOptions())
	res, err := ingest.Ingest(ctx, w, opts.Paths, iopt)
	if err != nil {
		done()
		return err
	}
	// Later reports need the catalog and read the saved overlap (shown as
	// phases of the progress display); a save made again without the
	// finish's memory bound is a note, as a file skipped is.
	err = target.Finish(aggregates.WithNotice(ctx, iopt.Notice), w.DB, cat.Catalog())
	done()
	if err != nil && ctx.Err() != nil {
		// Interrupted while saving the aggregates: the files are stored and
		// the next run saves the rest, so say that rather than the chain of
		// DuckDB's INTERRUPT errors.
		return res.Interrupted()
	}
	if fe, ok := err.(*aggregates.FinishError); ok {
		return finishFailed(opts.IO, res, fe)
	}
	if err != nil {
		// the warehouse failed (a disk full at a checkpoint): the files
		// stored stay, so say how many
		return res.FinishFailed(err)
	}
	return summarize(opts.IO, res)
}

// finishFailed reports runs whose saved copies could not be made: each
// fails alone, on one line. A run this command stored makes it exit 1
// (after the files' summary); an earlier run's copy tried again (a bounded
// retry) is a note, and this command's own runs decide the exit status.
func finishFailed(io *IOStreams, res *ingest.Result, fe *aggregates.FinishError) error {
	mine := map[string]bool{}
	for _, f := range res.Files {
		if f.Status == ingest.StatusIngested {
			mine[f.Run] = true
		}
	}
	failed := false
	for _, f := range fe.Failures {
		kind := "note"
		if mine[f.Label] {
			kind, failed = "error", true
		}
		fmt.Fprintf(io.ErrOut, "%s: %s\n", kind, oneLine(f.Error()))
	}
	if err := summarize(io, res); err != nil || !failed {
		return err
	}
	return &silentError{exitError}
}

// ingestLakeRun ingests into the lake of --lake.
func ingestLakeRun(opts *IngestOptions) error {
	engine, err := opts.Engine()
	if err != nil {
		return err
	}
	ctx, iopt, done := withProgress(opts.Ctx, opts.common, opts.ingestOptions())
	res, wr, err := lake.Ingest(ctx, opts.Lake, opts.Paths, iopt, catalog.Default(), engine)
	done()
	if err != nil {
		return err
	}
	// Traces another process put in the lake meanwhile count as already
	// there (lake.Ingest says so in res), as when this one finds them
	// first; one note per run they went to.
	other := map[[2]string]int{}
	var keys [][2]string
	for _, t := range wr.Traces {
		if t.Status == lake.StatusOtherRun {
			k := [2]string{t.LakeRun, t.Run}
			if other[k] == 0 {
				keys = append(keys, k)
			}
			other[k]++
		}
	}
	for _, k := range keys {
		opts.message(fmt.Sprintf("note: %d file(s) are in the lake under run %s (written meanwhile by another process): not added to run %s", other[k], k[0], k[1]))
	}
	return summarize(opts.IO, res)
}
