package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/target"
	"github.com/tracehouse/tracehouse/vocab"
)

// TriageOptions are the parsed flags of `tracehouse triage`.
type TriageOptions struct {
	common
	Format report.Format
	// Targets are RUN labels or PATHs (files or directories), in order.
	Targets []string
	// Mapping and Formal name the two runs of two-trace mode.
	Mapping string
	Formal  string
	Sections
	Framework string
	Timeline  int
	Catalog   string
	Out       string
}

// triageFrameworks are the --framework values.
var triageFrameworks = append([]string{"auto"}, vocab.Frameworks...)

func newCmdTriage(f *Factory, runF func(*TriageOptions) error) *cobra.Command {
	opts := &TriageOptions{}
	cmd := &cobra.Command{
		Use:         "triage [RUN | PATH ...]",
		Annotations: creates,
		Short:       "Where the GPU time goes, what could overlap, what could fuse",
		Long: `Print the three-table triage report of a run: the kernel table (GPU time per
kernel with its Python location and CPU op), the overlap-opportunity table and
the fuse-pattern table, one section per stage (extend/prefill, decode, mixed,
unknown), under a header saying what was measured.

A PATH (trace file or directory) is ingested first when needed, into the
warehouse of --db (use --db :memory: for a throw-away one); a PATH holding
several runs gives one report per run, in label order. A RUN is a label of
'tracehouse runs'. With no argument, the most recently ingested run is used.

Two-trace mode (--mapping RUN|PATH --formal RUN|PATH) takes the timing from
the formal run (the real serving config, e.g. CUDA graphs on) and the Python
locations from the mapping run (eager), matched by exact kernel name and
stage, then by the same name in another stage of the mapping run (marked ~),
then by the name without template arguments when that is unique. In
single-trace mode, kernels replayed by a CUDA graph are located at the frame
around their graph launch ("graph replay @ ...").

Reading the overlap table:
  verdict    headroom: mostly exclusive (>= 45% of its time alone on the GPU);
             low-roi-hidden: elementwise/memory already >= 65% hidden;
             hidden: mostly overlapped already; negligible: under 5 µs in total
  dep risk   the kernel's neighbours on its stream start or end within a tight
             gap: high when they share its Python file, function or CPU op (or
             a category dependency), unclear when a side has no site, else low
  priority   P1 try overlap / try fusion (headroom, low risk); P2 check deps;
             P3 manual check (no site) or observe later (compute); P4 already
             hidden; P5 under 1% of GPU busy time or negligible
--min-share only hides rows (a line under the kernel table counts them); it
never changes a priority. Table output fits the terminal; --wide prints
every column in full.

Shares say their denominator: kernel-table shares are of the stage's summed
kernel time, overlap shares of its GPU busy time (union of kernel intervals).

--format json writes one object per run (several runs make a stream of
objects; 'jq -s' collects them); times are in µs with exact *_ns integers
beside them. --format csv --out DIR writes one file per table, named
<run>.traces.csv, <run>.gpu_events.csv, <run>.stages.csv and
<run>.<stage>.{families,kernels,overlap,fusions}.csv.`,
		Example: `  tracehouse triage testdata/demo
  tracehouse triage --db :memory: profiles/decode-trace.json.gz
  tracehouse triage sglang-llama --stage decode --rank all
  tracehouse triage --mapping sglang-mapping --formal sglang-formal
  tracehouse triage sglang-llama --format json | jq '.stages[].kernels[0]'
  tracehouse triage sglang-llama --format csv --out triage-csv/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.common = f.common(cmd)
			opts.Targets = args
			var err error
			if opts.Format, err = f.outputFormat(); err != nil {
				return err
			}
			if err := opts.parse(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return triageRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Mapping, "mapping", "", "two-trace mode: the eager `RUN|PATH` lending Python locations")
	fl.StringVar(&opts.Formal, "formal", "", "two-trace mode: the `RUN|PATH` supplying timing")
	opts.Sections.bind(fl)
	fl.StringVar(&opts.Framework, "framework", "auto", "framework of traces that do not say theirs (header and catalog statuses): "+strings.Join(triageFrameworks, ", "))
	fl.IntVar(&opts.Timeline, "timeline", 0, "ASCII timelines for the first `N` overlap rows of each stage")
	fl.StringVar(&opts.Catalog, "catalog", "", "match fuse patterns against this catalog `FILE` instead of the built-in one")
	fl.StringVar(&opts.Out, "out", "", "with --format csv: write one CSV file per table into `DIR`")
	_ = cmd.RegisterFlagCompletionFunc("stage", cobra.FixedCompletions(append(slices.Clone(vocab.Stages), "all"), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("framework", cobra.FixedCompletions(triageFrameworks, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// parse checks the flags together; every mistake is a usage error (exit 2).
func (o *TriageOptions) parse(cmd *cobra.Command) error {
	if (o.Mapping == "") != (o.Formal == "") {
		return usagef("--mapping and --formal go together (two-trace mode)")
	}
	if o.Mapping != "" && len(o.Targets) > 0 {
		return usagef("two-trace mode takes no RUN or PATH arguments besides --mapping and --formal")
	}
	if err := o.Sections.parse(cmd); err != nil {
		return err
	}
	if o.Timeline < 0 {
		return usagef("--timeline %d: want 0 or more", o.Timeline)
	}
	o.Framework = strings.ToLower(o.Framework)
	if !slices.Contains(triageFrameworks, o.Framework) {
		return usagef("--framework %q: want one of %s", o.Framework, strings.Join(triageFrameworks, ", "))
	}
	if o.Format == report.CSV && o.Out == "" {
		return usagef("--format csv writes one file per table: add --out DIR")
	}
	if o.Out != "" && o.Format != report.CSV {
		return usagef("--out writes CSV files: add --format csv")
	}
	return nil
}

func triageRun(opts *TriageOptions) error {
	ctx := opts.Ctx
	cat, err := catalogFor(opts.Catalog)
	if err != nil {
		return err
	}
	write, labels := target.Needs(append(slices.Clone(opts.Targets), opts.Mapping, opts.Formal)...)
	write = write || opts.Catalog != ""
	if write {
		cat.Prefetch()
	}
	open := opts.warehouseFor(labels)
	w, err := target.Open(ctx, open, write, cat, func(msg string) {
		opts.message("note: " + oneLine(msg))
	})
	if err != nil {
		return err
	}
	defer w.Close()

	targets, ingestErr, err := triageTargets(opts, w, cat)
	if err != nil {
		return err
	}
	if err := triageRender(opts.common, opts.Format, opts.Out, w, targets, opts.Sections.triage(opts.Framework, opts.Timeline)); err != nil {
		return err
	}
	return ingestErr
}

// triageTargets resolves the arguments to the runs to report on, ingesting
// paths first. ingestErr is set when a file failed to ingest (reported
// already): the reports go on with what landed and the exit status is 1.
func triageTargets(opts *TriageOptions, w *schema.Warehouse, cat *catalog.Lazy) (targets []triageTarget, ingestErr, err error) {
	ctx := opts.Ctx
	resolve := func(arg, role string) ([]target.Run, error) {
		runs, iErr, err := resolveArg(opts.common, w, cat, arg, role)
		if err != nil {
			return nil, err
		}
		if iErr != nil {
			ingestErr = iErr
		}
		if len(runs) == 0 {
			// Every file of the path failed (each reported above); the
			// other arguments may still have landed.
			fmt.Fprintf(opts.IO.ErrOut, "error: %s: no trace of it could be stored\n", arg)
			ingestErr = &silentError{exitError}
		}
		return runs, nil
	}
	switch {
	case opts.Mapping != "":
		one := func(arg, role string) (target.Run, error) {
			runs, err := resolve(arg, role)
			if err != nil {
				return target.Run{}, err
			}
			if len(runs) == 0 {
				return target.Run{}, ingestErr // reported above
			}
			if len(runs) != 1 {
				labels := make([]string, len(runs))
				for i, r := range runs {
					labels[i] = r.Label
				}
				return target.Run{}, usagef("--%s %s holds %d runs (%s): name one", role, arg, len(runs), strings.Join(labels, ", "))
			}
			return runs[0], nil
		}
		m, err := one(opts.Mapping, vocab.Mapping)
		if err != nil {
			return nil, nil, err
		}
		fr, err := one(opts.Formal, vocab.Formal)
		if err != nil {
			return nil, nil, err
		}
		if m.ID == fr.ID {
			return nil, nil, usagef("--mapping and --formal are the same run (%s)", m.Label)
		}
		return []triageTarget{{run: fr, mapping: &m}}, ingestErr, nil
	case len(opts.Targets) == 0:
		r, err := target.Latest(ctx, w)
		if err != nil {
			return nil, nil, err
		}
		return []triageTarget{{run: r}}, nil, nil
	}
	seen := map[int64]bool{}
	for _, arg := range opts.Targets {
		runs, err := resolve(arg, "")
		if err != nil {
			return nil, nil, err
		}
		for _, r := range runs {
			if !seen[r.ID] {
				seen[r.ID] = true
				targets = append(targets, triageTarget{run: r})
			}
		}
	}
	return targets, ingestErr, nil
}
