package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/schema"
)

// IngestOptions are the parsed flags of `tracehouse ingest`.
type IngestOptions struct {
	Paths     []string
	Run       string
	Framework string
	Stage     string
	Role      string
	Tags      []string
	Jobs      int
	Replace   bool
}

func newCmdIngest(f *Factory, runF func(*IngestOptions) error) *cobra.Command {
	opts := &IngestOptions{}
	cmd := &cobra.Command{
		Use:   "ingest PATH...",
		Short: "Load trace files and directories into the warehouse",
		Long: `Load torch.profiler Chrome traces (*.json, *.json.gz) into the warehouse.

Directories are searched recursively. Each file lands whole or not at all;
a file already stored (same content) is skipped; damaged files are reported
one line each and the others still load. The exit status is 1 when any file
failed.

Runs are named after the nearest directory holding a server_args.json (its
parent when that is a timestamp directory), else the first directory below the
path given, else the path itself; --run names them yourself.`,
		Example: `  tracehouse ingest profiles/
  tracehouse ingest --run llama-tp8-nightly --tag date=2026-11-29 /data/traces/*.json.gz
  tracehouse ingest --stage decode --framework sglang decode-trace.json`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(opts)
			}
			return ingestRun(cmd, f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Run, "run", "", "label every file's run with `LABEL`")
	cmd.Flags().StringVar(&opts.Framework, "framework", "", "framework of the traces: sglang, vllm, trtllm or tokenspeed (default: detect)")
	cmd.Flags().StringVar(&opts.Stage, "stage", "", "stage of the traces: prefill, decode or mixed (default: detect)")
	cmd.Flags().StringVar(&opts.Role, "role", "", "two-trace role: mapping (CUDA graphs off) or formal (default: detect)")
	cmd.Flags().StringArrayVar(&opts.Tags, "tag", nil, "attach `key=value` to the run (repeatable)")
	cmd.Flags().IntVarP(&opts.Jobs, "jobs", "j", 0, "files to load in parallel (default: CPUs)")
	cmd.Flags().BoolVar(&opts.Replace, "replace", false, "re-ingest files already stored")
	_ = cmd.RegisterFlagCompletionFunc("framework", cobra.FixedCompletions([]string{"sglang", "vllm", "trtllm", "tokenspeed"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("stage", cobra.FixedCompletions([]string{"prefill", "decode", "mixed"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("role", cobra.FixedCompletions([]string{"mapping", "formal"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (o *IngestOptions) toIngest() (ingest.Options, error) {
	tags := map[string]string{}
	for _, t := range o.Tags {
		k, v, ok := strings.Cut(t, "=")
		if !ok || k == "" {
			return ingest.Options{}, usagef("--tag %q: want key=value", t)
		}
		tags[k] = v
	}
	opt := ingest.Options{Run: o.Run, Framework: o.Framework, Stage: o.Stage, Role: o.Role, Tags: tags, Jobs: o.Jobs, Replace: o.Replace}
	if err := opt.Validate(); err != nil {
		return ingest.Options{}, &usageError{err}
	}
	if o.Jobs < 0 {
		return ingest.Options{}, usagef("--jobs %d: want 1 or more", o.Jobs)
	}
	return opt, nil
}

func ingestRun(cmd *cobra.Command, f *Factory, opts *IngestOptions) error {
	iopt, err := opts.toIngest()
	if err != nil {
		return err
	}
	w, err := f.Open(cmd.Context(), false)
	if err != nil {
		return err
	}
	defer w.Close()
	res, err := ingestPaths(cmd, f, w, opts.Paths, iopt)
	if err != nil {
		return err
	}
	// Later reports need the catalog.
	if err := catalog.Install(cmd.Context(), w.DB, catalog.Default()); err != nil {
		return err
	}
	return summarize(f, res)
}

// ingestPaths runs an ingest with a progress bar (on a terminal) and
// notices on stderr.
func ingestPaths(cmd *cobra.Command, f *Factory, w *schema.Warehouse, paths []string, iopt ingest.Options) (*ingest.Result, error) {
	if b := newBar(f); b != nil {
		iopt.Progress = b
		defer b.finish()
	}
	iopt.Notice = func(msg string) { fmt.Fprintf(f.IO.ErrOut, "note: %s\n", oneLine(msg)) }
	res, err := ingest.Ingest(cmd.Context(), w, paths, iopt)
	if err != nil {
		return nil, err
	}
	// Reports read the per-kernel overlap of the runs that got traces from a
	// saved copy instead of sweeping again.
	var fresh []int64
	for _, r := range res.Files {
		if r.Status == ingest.StatusIngested {
			fresh = append(fresh, r.TraceID)
		}
	}
	if err := storeOverlap(cmd.Context(), w.DB, fresh, iopt.Role); err != nil {
		return nil, err
	}
	return res, nil
}

// storeOverlap saves the per-kernel overlap of the runs that just received
// traces (queries.StoreKernelOverlap): the sweep is the costliest part of a
// report, and the warehouse is open for writing anyway, so this report and
// every later one of these runs read the saved copy. A mapping run only
// lends sites, so its overlap is never shown and not worth saving.
func storeOverlap(ctx context.Context, db *sql.DB, freshTraces []int64, role string) error {
	if len(freshTraces) == 0 || role == "mapping" {
		return nil
	}
	runs, err := queries.TriageRunsOfTraces(ctx, db, freshTraces)
	if err != nil {
		return err
	}
	for _, r := range runs {
		if err := queries.StoreKernelOverlap(ctx, db, r.RunID); err != nil {
			return err
		}
	}
	return nil
}

// summarize prints one line per failed file and a total, and turns failures
// into exit status 1.
func summarize(f *Factory, res *ingest.Result) error {
	var ingested, already, skipped, failed int
	var events, gpu, bytes int64
	var elapsed time.Duration
	for _, r := range res.Files {
		switch r.Status {
		case ingest.StatusIngested:
			ingested++
			events += r.Events
			gpu += r.GPUEvents
			bytes += r.JSONBytes
			elapsed += r.Elapsed
		case ingest.StatusAlready:
			already++
		case ingest.StatusSkipped:
			skipped++
		case ingest.StatusFailed:
			failed++
			fmt.Fprintf(f.IO.ErrOut, "error: %s\n", oneLine(r.Err.Error()))
		}
	}
	fmt.Fprintf(f.IO.ErrOut, "ingested %d file(s) (%d events, %d GPU events, %.1f MB of JSON)", ingested, events, gpu, float64(bytes)/1e6)
	if already > 0 {
		fmt.Fprintf(f.IO.ErrOut, ", %d already ingested", already)
	}
	if skipped > 0 {
		fmt.Fprintf(f.IO.ErrOut, ", %d skipped", skipped)
	}
	if failed > 0 {
		fmt.Fprintf(f.IO.ErrOut, ", %d failed", failed)
	}
	fmt.Fprintln(f.IO.ErrOut)
	if failed > 0 {
		return &silentError{exitError}
	}
	return nil
}

// bar is a progress bar on stderr, shown only on a terminal.
type bar struct {
	w io.Writer
	b *progressbar.ProgressBar
}

func newBar(f *Factory) *bar {
	if !f.IO.ErrTTY {
		return nil
	}
	return &bar{w: f.IO.ErrOut}
}

func (b *bar) Start(total int64) {
	b.b = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetDescription("ingest"),
		progressbar.OptionShowBytes(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

func (b *bar) Add(n int64) {
	if b.b != nil {
		_ = b.b.Add64(n)
	}
}

func (b *bar) finish() {
	if b.b != nil {
		_ = b.b.Finish()
	}
}
