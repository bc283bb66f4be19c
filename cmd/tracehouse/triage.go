package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema"
)

// TriageOptions are the parsed flags of `tracehouse triage`.
type TriageOptions struct {
	// Targets are RUN labels or PATHs (files or directories), in order.
	Targets []string
	// Mapping and Formal name the two runs of two-trace mode.
	Mapping string
	Formal  string
	// Stage is prefill, decode, mixed, unknown, or "" for every stage.
	Stage string
	// Rank is the rank shown; RankAll sums every rank and adds the spread.
	Rank    int64
	RankAll bool
	// RankSet says --rank was given (else rank 0, or the run's lowest).
	RankSet     bool
	MinShare    float64
	Framework   string
	Timeline    int
	OverlapRows int
	Catalog     string
	Out         string
}

// triageStages are the --stage values; extend is SGLang's word for prefill.
var triageStages = map[string]string{
	"all": "", "prefill": "prefill", "extend": "prefill", "extend/prefill": "prefill",
	"decode": "decode", "mixed": "mixed", "unknown": "unknown",
}

var triageFrameworks = []string{"auto", "sglang", "vllm", "trtllm", "tokenspeed"}

func newCmdTriage(f *Factory, runF func(*TriageOptions) error) *cobra.Command {
	opts := &TriageOptions{}
	var stage, rank string
	cmd := &cobra.Command{
		Use:   "triage [RUN | PATH ...]",
		Short: "Where the GPU time goes, what could overlap, what could fuse",
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
stage, then by the name without template arguments when that is unique.

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
			opts.Targets = args
			if err := opts.parse(cmd, f, stage, rank); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return triageRun(cmd, f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Mapping, "mapping", "", "two-trace mode: the eager `RUN|PATH` lending Python locations")
	fl.StringVar(&opts.Formal, "formal", "", "two-trace mode: the `RUN|PATH` supplying timing")
	fl.StringVar(&stage, "stage", "all", "stage to show: prefill (extend), decode, mixed, unknown or all")
	fl.StringVar(&rank, "rank", "0", "rank to show, or all (sums ranks and adds a rank-spread column)")
	fl.Float64Var(&opts.MinShare, "min-share", 1.0, "hide kernel and overlap rows under this `PERCENT` of their stage (0 shows all)")
	fl.StringVar(&opts.Framework, "framework", "auto", "framework to display when the traces do not say: "+strings.Join(triageFrameworks, ", "))
	fl.IntVar(&opts.Timeline, "timeline", 0, "ASCII timelines for the first `N` overlap rows of each stage")
	fl.IntVar(&opts.OverlapRows, "overlap-rows", 10, "at most `N` overlap rows per stage (0 = no cap)")
	fl.StringVar(&opts.Catalog, "catalog", "", "match fuse patterns against this catalog `FILE` instead of the built-in one")
	fl.StringVar(&opts.Out, "out", "", "with --format csv: write one CSV file per table into `DIR`")
	_ = cmd.RegisterFlagCompletionFunc("stage", cobra.FixedCompletions([]string{"prefill", "decode", "mixed", "unknown", "all"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("framework", cobra.FixedCompletions(triageFrameworks, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// parse checks the flags together; every mistake is a usage error (exit 2).
func (o *TriageOptions) parse(cmd *cobra.Command, f *Factory, stage, rank string) error {
	if (o.Mapping == "") != (o.Formal == "") {
		return usagef("--mapping and --formal go together (two-trace mode)")
	}
	if o.Mapping != "" && len(o.Targets) > 0 {
		return usagef("two-trace mode takes no RUN or PATH arguments besides --mapping and --formal")
	}
	s, ok := triageStages[strings.ToLower(stage)]
	if !ok {
		return usagef("--stage %q: want prefill, decode, mixed, unknown or all", stage)
	}
	o.Stage = s
	o.RankSet = cmd.Flags().Changed("rank")
	if strings.EqualFold(rank, "all") {
		o.RankAll = true
	} else {
		n, err := strconv.ParseInt(rank, 10, 32)
		if err != nil || n < 0 {
			return usagef("--rank %q: want a rank number (0, 1, ...) or all", rank)
		}
		o.Rank = n
	}
	if o.MinShare < 0 || o.MinShare > 100 {
		return usagef("--min-share %v: want a percentage from 0 to 100", o.MinShare)
	}
	if o.Timeline < 0 {
		return usagef("--timeline %d: want 0 or more", o.Timeline)
	}
	if o.OverlapRows < 0 {
		return usagef("--overlap-rows %d: want 0 or more", o.OverlapRows)
	}
	o.Framework = strings.ToLower(o.Framework)
	valid := false
	for _, fw := range triageFrameworks {
		valid = valid || o.Framework == fw
	}
	if !valid {
		return usagef("--framework %q: want one of %s", o.Framework, strings.Join(triageFrameworks, ", "))
	}
	format, err := f.OutputFormat()
	if err != nil {
		return err
	}
	if format == report.CSV && o.Out == "" {
		return &usageError{report.ErrCSVNeedsDir}
	}
	if o.Out != "" && format != report.CSV {
		return usagef("--out writes CSV files: add --format csv")
	}
	return nil
}

// triageTarget is one run to report on.
type triageTarget struct {
	run     int64
	label   string
	mapping sql.NullInt64
}

func triageRun(cmd *cobra.Command, f *Factory, opts *TriageOptions) error {
	ctx := cmd.Context()
	format, err := f.OutputFormat()
	if err != nil {
		return err
	}
	var paths []string
	isPath := func(s string) bool {
		_, err := os.Stat(s)
		return err == nil
	}
	for _, t := range append(append([]string{}, opts.Targets...), opts.Mapping, opts.Formal) {
		if t != "" && isPath(t) {
			paths = append(paths, t)
		}
	}
	cat := catalog.Default()
	if opts.Catalog != "" {
		if cat, err = catalog.Load(opts.Catalog); err != nil {
			return err
		}
	}
	// Read-only unless something must be written: other readers (and the
	// duckdb CLI) can then share the warehouse.
	w, err := f.Open(ctx, len(paths) == 0 && opts.Catalog == "")
	if err != nil {
		return err
	}
	if w, err = ensureCatalog(ctx, f, w, cat); err != nil {
		return err
	}
	defer w.Close()

	var ingestErr error
	ingestOne := func(path, role string) ([]queries.TriageRunsOfTracesRow, error) {
		res, err := ingestPaths(cmd, f, w, []string{path}, ingest.Options{Role: role})
		if err != nil {
			return nil, err
		}
		if err := summarize(f, res); err != nil {
			// Reported per file already; triage goes on with what landed
			// and exits 1 at the end.
			ingestErr = err
		}
		var ids []int64
		for _, r := range res.Files {
			if r.Status == ingest.StatusIngested || r.Status == ingest.StatusAlready {
				ids = append(ids, r.TraceID)
			}
		}
		runs, err := queries.TriageRunsOfTraces(ctx, w.DB, ids)
		if err != nil {
			return nil, err
		}
		if len(runs) == 0 {
			// Every file of the path failed (each reported above); the
			// other arguments may still have landed.
			fmt.Fprintf(f.IO.ErrOut, "error: %s: no trace of it could be stored\n", path)
			ingestErr = &silentError{exitError}
		}
		return runs, nil
	}
	resolve := func(arg, role string) ([]queries.TriageRunsOfTracesRow, error) {
		if isPath(arg) {
			return ingestOne(arg, role)
		}
		r, err := queries.TriageRun(ctx, w.DB, sql.NullInt64{}, sql.NullString{String: arg, Valid: true})
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, fmt.Errorf("%q is neither a file, a directory nor a run of %s (see 'tracehouse runs')", arg, f.DBPath())
		}
		return []queries.TriageRunsOfTracesRow{{RunID: r.RunID, Label: r.Label}}, nil
	}

	var targets []triageTarget
	switch {
	case opts.Mapping != "":
		one := func(arg, role string) (queries.TriageRunsOfTracesRow, error) {
			runs, err := resolve(arg, role)
			if err != nil {
				return queries.TriageRunsOfTracesRow{}, err
			}
			if len(runs) == 0 {
				return queries.TriageRunsOfTracesRow{}, ingestErr // reported above
			}
			if len(runs) != 1 {
				labels := make([]string, len(runs))
				for i, r := range runs {
					labels[i] = r.Label
				}
				return queries.TriageRunsOfTracesRow{}, usagef("--%s %s holds %d runs (%s): name one", role, arg, len(runs), strings.Join(labels, ", "))
			}
			return runs[0], nil
		}
		m, err := one(opts.Mapping, "mapping")
		if err != nil {
			return err
		}
		fr, err := one(opts.Formal, "formal")
		if err != nil {
			return err
		}
		if m.RunID == fr.RunID {
			return usagef("--mapping and --formal are the same run (%s)", m.Label)
		}
		targets = append(targets, triageTarget{run: fr.RunID, label: fr.Label, mapping: sql.NullInt64{Int64: m.RunID, Valid: true}})
	case len(opts.Targets) == 0:
		runs, err := queries.Runs(ctx, w.DB)
		if err != nil {
			return err
		}
		if len(runs) == 0 {
			return fmt.Errorf("no runs in %s: pass a trace PATH, or ingest with 'tracehouse ingest PATH'", f.DBPath())
		}
		targets = append(targets, triageTarget{run: runs[0].RunID, label: runs[0].Label})
	default:
		seen := map[int64]bool{}
		for _, arg := range opts.Targets {
			runs, err := resolve(arg, "")
			if err != nil {
				return err
			}
			for _, r := range runs {
				if !seen[r.RunID] {
					seen[r.RunID] = true
					targets = append(targets, triageTarget{run: r.RunID, label: r.Label})
				}
			}
		}
	}

	if len(targets) == 0 {
		return ingestErr
	}

	var csvDoc report.Doc
	for i, t := range targets {
		rep, err := triageOne(ctx, f, w.DB, opts, t)
		if err != nil {
			return err
		}
		switch format {
		case report.CSV:
			for _, tb := range rep.CSVTables() {
				csvDoc.Blocks = append(csvDoc.Blocks, tb)
			}
			continue
		case report.Text, report.Markdown:
			if i > 0 {
				fmt.Fprintln(f.IO.Out)
			}
		}
		if err := report.Render(f.IO.Out, format, rep.Doc(format)); err != nil {
			return err
		}
	}
	if format == report.CSV {
		written, err := report.RenderCSVDir(opts.Out, csvDoc)
		if err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "wrote %d CSV file(s) to %s\n", len(written), opts.Out)
	}
	return ingestErr
}

// triageOne builds the report of one run.
func triageOne(ctx context.Context, f *Factory, db *sql.DB, opts *TriageOptions, t triageTarget) (*report.TriageReport, error) {
	events, err := queries.TriageGPUEvents(ctx, db, t.run)
	if err != nil {
		return nil, err
	}
	var ranks []int64
	for _, e := range events {
		if e.Events > 0 && !containsInt(ranks, e.Rank) {
			ranks = append(ranks, e.Rank)
		}
	}
	p := queries.TriageParams{Run: t.run, Mapping: t.mapping, Stage: sql.NullString{String: opts.Stage, Valid: opts.Stage != ""},
		MinShare: opts.MinShare, OverlapRows: opts.OverlapRows}
	var note string
	if !opts.RankAll {
		rank := opts.Rank
		if !containsInt(ranks, rank) && len(ranks) > 0 {
			if opts.RankSet {
				return nil, fmt.Errorf("run %s has no GPU events on rank %d (ranks: %s); see --rank", t.label, rank, joinInts(ranks))
			}
			rank = minInt(ranks)
			note = fmt.Sprintf("run %s has no GPU events on rank 0: showing rank %d (--rank all sums every rank)", t.label, rank)
		}
		p.Rank = sql.NullInt64{Int64: rank, Valid: true}
	}
	d, err := queries.Triage(ctx, db, p)
	if err != nil {
		return nil, err
	}
	rep := report.NewTriage(d, report.TriageOptions{Framework: opts.Framework})
	if opts.Timeline > 0 {
		if err := triageTimelines(ctx, db, d.Overlap, opts.Timeline, rep); err != nil {
			return nil, err
		}
	}
	if note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	if opts.Stage != "" && len(rep.Stages) == 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("no GPU events in stage %s", report.StageName(opts.Stage)))
	}
	return rep, nil
}

// triageTimelines draws the ASCII window around the longest instance of
// each of the first n overlap rows of every stage (triage.md section 4).
func triageTimelines(ctx context.Context, db *sql.DB, rows []queries.OverlapByKernelRow, n int, rep *report.TriageReport) error {
	lines := map[string][]string{}
	drawn := map[string]int{}
	var stages []string
	for _, o := range rows {
		if drawn[o.Stage] >= n {
			continue
		}
		if drawn[o.Stage] == 0 {
			stages = append(stages, o.Stage)
		} else {
			lines[o.Stage] = append(lines[o.Stage], "")
		}
		drawn[o.Stage]++
		from, to, events, err := queries.TimelineAround(ctx, db, o.Longest)
		if err != nil {
			return err
		}
		t := report.Timeline{Title: fmt.Sprintf("%s %s: longest instance %s us", o.Priority, o.Kernel,
			strconv.FormatFloat(float64(o.Longest.DurNS)/1000, 'f', 1, 64)), FromNS: from, ToNS: to, FocusID: o.Longest.KernelID}
		for _, e := range events {
			t.Events = append(t.Events, report.TimelineEvent{KernelID: e.KernelID, Name: e.Name, Category: e.Category,
				Stream: e.Stream.Int64, HasStream: e.Stream.Valid, TSNS: e.TSNS, DurNS: e.DurNS})
		}
		var b strings.Builder
		if err := report.RenderTimeline(&b, t, report.DefaultTimelineWidth); err != nil {
			return err
		}
		lines[o.Stage] = append(lines[o.Stage], strings.Split(strings.TrimRight(b.String(), "\n"), "\n")...)
	}
	for _, st := range stages {
		rep.SetTimelines(st, lines[st])
	}
	return nil
}

// ensureCatalog makes the warehouse hold cat, reopening it for writing
// when it was opened read-only and holds another catalog (or none). If the
// warehouse cannot be written (another process holds it), triage goes on
// with the stored catalog and says so.
func ensureCatalog(ctx context.Context, f *Factory, w *schema.Warehouse, cat *catalog.Catalog) (*schema.Warehouse, error) {
	if !w.ReadOnly {
		if err := catalog.Install(ctx, w.DB, cat); err != nil {
			w.Close()
			return nil, err
		}
		return w, nil
	}
	h, err := catalog.InstalledHash(ctx, w.DB)
	if err != nil {
		w.Close()
		return nil, err
	}
	if h == cat.Hash() {
		return w, nil
	}
	w.Close()
	rw, err := f.Open(ctx, false)
	if err != nil {
		var locked *schema.LockedError
		if !errors.As(err, &locked) {
			return nil, err
		}
		fmt.Fprintf(f.IO.ErrOut, "note: %v; fuse patterns use the catalog stored there\n", err)
		return f.Open(ctx, true)
	}
	if err := catalog.Install(ctx, rw.DB, cat); err != nil {
		rw.Close()
		return nil, err
	}
	return rw, nil
}

func containsInt(s []int64, v int64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func minInt(s []int64) int64 {
	m := s[0]
	for _, x := range s[1:] {
		m = min(m, x)
	}
	return m
}

func joinInts(s []int64) string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(out, ", ")
}
