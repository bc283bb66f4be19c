package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/assemble"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/outfile"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/target"
	"github.com/tracehouse/tracehouse/vocab"
)

// ReportOptions are the parsed flags of `tracehouse report`.
type ReportOptions struct {
	common
	// Targets are run selectors or PATHs; none = every run (or those
	// carrying Tags).
	Targets []string
	// Markdown and HTML are the files to write ("-" = standard output).
	Markdown, HTML string
	Title          string
	// Tags are key=value pairs a run must all carry (no Targets).
	Tags []string
	// Compare is BASE, CANDIDATE for the comparison section; empty = none.
	Compare []string
	// History are the --history values, each the flags of `tracehouse
	// history`; histories are them parsed, in order.
	History   []string
	histories []*HistoryOptions
	Sections
	Timelines int
	// Force replaces an output file that is not a report written before.
	Force bool
}

func newCmdReport(f *Factory, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{}
	cmd := &cobra.Command{
		Use:         "report (--markdown FILE | --html FILE) [RUN | PATH ...]",
		Annotations: creates,
		Short:       "One document for many runs: markdown, or HTML with charts",
		Long: `Write the triage report of several runs into one document, grouped by model,
then framework (SGLang, vLLM, TensorRT-LLM, TokenSpeed), with a table of
contents: per run the triage header and, per stage, the kernel, overlap and
fuse-pattern tables (README "Reports").

--markdown FILE writes GitHub-flavoured markdown (pipe tables; names are
escaped so that they show as text). --html FILE writes one self-contained
page that needs no network: the same content plus charts drawn as SVG
(family shares per stage as stacked bars, the top kernels as bars, a
timeline around the longest instance of the first --timelines overlap rows),
sortable tables and long kernel names shortened with the full name on hover.
Both can be written at once; FILE - writes to standard output. An existing
FILE is replaced when it is a report written before, otherwise only with
--force; a device, FIFO or other special file never is.

With no RUN, every run of the warehouse is reported (only those carrying
every --tag KEY=VALUE when given). A RUN is a label, @latest, @latest~N,
tag:KEY=VALUE or a PATH (ingested first, as triage does).

--compare BASE,CANDIDATE adds the comparison of 'tracehouse compare' with the
default gates: in HTML, per-family delta bars (where the step-time delta
went) and the largest kernel deltas, faded where not significant (~).

--history 'FLAGS' adds the history of 'tracehouse history FLAGS' (repeatable,
one section each): its runs, order, stages and rank come from FLAGS, not
from RUN, --stage or --rank. Per stage, the table history prints and, in
HTML, a line chart of the median per step over the runs with its interval,
change points ringed and marked (red: slower, green: faster).

Progress goes to standard error, one line per run.`,
		Example: `  tracehouse ingest testdata/demo
  tracehouse report --markdown report.md --html report.html
  tracehouse report --html demo.html sglang-llama vllm-qwen-moe --stage decode
  tracehouse report --html cmp.html --compare sglang-llama,sglang-formal \
    sglang-llama sglang-formal
  tracehouse report --markdown - --tag branch=main | less
  tracehouse report --html main.html --tag branch=main \
    --history '--metric step_time --tag branch=main --by commit_date' \
    --history '--kernel "fused_moe|topk" --stage decode --tag branch=main'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.common = f.common(cmd)
			opts.Targets = args
			if cmd.Flags().Changed("format") {
				return usagef("report writes --markdown FILE and/or --html FILE; --format does not apply")
			}
			if err := opts.parse(cmd, f); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return reportRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Markdown, "markdown", "", "write the markdown document to `FILE` (- for standard output)")
	fl.StringVar(&opts.HTML, "html", "", "write the self-contained HTML page to `FILE` (- for standard output)")
	fl.StringVar(&opts.Title, "title", "tracehouse report", "the document's `TITLE`")
	fl.StringArrayVar(&opts.Tags, "tag", nil, "with no RUN: only runs carrying `KEY=VALUE` (repeatable: all must match)")
	fl.StringSliceVar(&opts.Compare, "compare", nil, "add the comparison of `BASE,CANDIDATE` (run selectors or PATHs)")
	fl.StringArrayVar(&opts.History, "history", nil, "add the history of 'tracehouse history `FLAGS`', quoted as one value (repeatable)")
	opts.Sections.bind(fl)
	fl.BoolVar(&opts.Force, "force", false, "replace an existing FILE that is not a report written before")
	fl.IntVar(&opts.Timelines, "timelines", 3, "timelines around the longest instance of the first `N` overlap rows of each stage")
	_ = cmd.RegisterFlagCompletionFunc("stage", cobra.FixedCompletions(append(slices.Clone(vocab.Stages), "all"), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// parse checks the flags together; every mistake is a usage error (exit 2).
func (o *ReportOptions) parse(cmd *cobra.Command, f *Factory) error {
	if o.Markdown == "" && o.HTML == "" {
		return usagef("say what to write: --markdown FILE and/or --html FILE")
	}
	if o.Markdown == "-" && o.HTML == "-" {
		return usagef("--markdown - and --html - would both write to standard output: give one a FILE")
	}
	if o.Markdown != "" && o.Markdown == o.HTML {
		return usagef("--markdown and --html name the same file %s", o.Markdown)
	}
	if len(o.Tags) > 0 && len(o.Targets) > 0 {
		return usagef("--tag selects among every run: give it without RUN arguments (or name runs as tag:KEY=VALUE)")
	}
	for _, t := range o.Tags {
		if k, _, ok := strings.Cut(t, "="); !ok || k == "" {
			return usagef("--tag %q: want KEY=VALUE", t)
		}
	}
	if cmd.Flags().Changed("compare") {
		if len(o.Compare) != 2 || o.Compare[0] == "" || o.Compare[1] == "" {
			return usagef("--compare %q: want BASE,CANDIDATE", strings.Join(o.Compare, ","))
		}
	}
	for _, h := range o.History {
		ho, err := parseHistoryArgs(f, h)
		if err != nil {
			return err
		}
		o.histories = append(o.histories, ho)
	}
	if err := o.Sections.parse(cmd); err != nil {
		return err
	}
	if o.Timelines < 0 {
		return usagef("--timelines %d: want 0 or more", o.Timelines)
	}
	return nil
}

func reportRun(opts *ReportOptions) error {
	// The outputs are checked before any work (and again at the rename).
	for _, name := range []string{opts.Markdown, opts.HTML} {
		if name != "" && name != "-" {
			if err := outfile.Check(name, outfile.Policy{Force: opts.Force, Ours: reportWritten}); err != nil {
				return err
			}
		}
	}
	doc, ingestErr, err := reportBuild(opts)
	if err != nil {
		return err
	}
	if opts.Markdown != "" {
		if err := writeReport(opts, opts.Markdown, func(w io.Writer) error {
			if opts.Markdown != "-" {
				// (invisible once rendered; says the file is a report)
				io.WriteString(w, markdownMark)
			}
			return report.Render(w, report.Markdown, doc.Markdown())
		}); err != nil {
			return err
		}
	}
	if opts.HTML != "" {
		if err := writeReport(opts, opts.HTML, func(w io.Writer) error {
			return report.RenderHTML(w, doc, report.HTMLOptions{})
		}); err != nil {
			return err
		}
	}
	return ingestErr
}

// reportBuild resolves the runs, builds each one's triage report (and the
// comparison) and groups them into a document.
func reportBuild(opts *ReportOptions) (doc *report.Document, ingestErr, err error) {
	ctx := opts.Ctx
	cat, _ := catalogFor("") // (the embedded catalog has no error)
	// every run, whatever the arguments: --tag and --history select among them
	write, _ := target.Needs(append(slices.Clone(opts.Targets), opts.Compare...)...)
	if write {
		cat.Prefetch()
	}
	w, err := target.Open(ctx, opts.Warehouse, write, cat, func(msg string) {
		opts.message("note: " + oneLine(msg))
	})
	if err != nil {
		return nil, nil, err
	}
	defer w.Close()

	runs, ingestErr, err := reportRuns(opts, w, cat)
	if err != nil {
		return nil, nil, err
	}
	topts := opts.Sections.triage("auto", opts.Timelines)
	var reps []*report.TriageReport
	for i, r := range runs {
		opts.message(fmt.Sprintf("report: [%d/%d] %s", i+1, len(runs), r.Label))
		rep, err := assemble.Triage(ctx, w, r, nil, topts)
		if err != nil {
			return nil, nil, fmt.Errorf("run %s: %w", r.Label, err)
		}
		reps = append(reps, rep)
	}
	doc = report.NewDocument(opts.Title, reps)
	if len(opts.Compare) == 2 {
		opts.message(fmt.Sprintf("report: compare %s -> %s", opts.Compare[0], opts.Compare[1]))
		copts := assemble.CompareOptions{Stage: opts.Stage, Rank: opts.Rank, RankAll: opts.RankAll, RankSet: opts.RankSet,
			Gates: assemble.DefaultGates()}
		cmp, cErr, err := compareArgs(opts.common, w, cat, opts.Compare[0], opts.Compare[1], copts)
		if err != nil {
			return nil, nil, fmt.Errorf("--compare: %w", err)
		}
		if cErr != nil {
			ingestErr = cErr
		}
		doc.Compare = cmp
	}
	for i, ho := range opts.histories {
		opts.message("report: history " + opts.History[i])
		rep, err := assemble.History(ctx, w, ho.HistoryOptions)
		if err != nil {
			return nil, nil, fmt.Errorf("--history %s: %w", opts.History[i], err)
		}
		doc.History = append(doc.History, rep)
	}
	return doc, ingestErr, nil
}

// reportRuns resolves the arguments (or --tag, or every run) to runs, in
// argument order without repeats.
func reportRuns(opts *ReportOptions, w *schema.Warehouse, cat *catalog.Lazy) (runs []target.Run, ingestErr, err error) {
	ctx := opts.Ctx
	if len(opts.Targets) == 0 {
		runs, err := target.SelectTagged(ctx, w, opts.Tags)
		if err != nil {
			return nil, nil, err
		}
		return runs, nil, nil
	}
	seen := map[int64]bool{}
	for _, arg := range opts.Targets {
		got, iErr, err := resolveArg(opts.common, w, cat, arg, "")
		if err != nil {
			return nil, nil, err
		}
		if iErr != nil {
			ingestErr = iErr
		}
		if len(got) == 0 {
			fmt.Fprintf(opts.IO.ErrOut, "error: %s: no trace of it could be stored\n", arg)
			ingestErr = &silentError{exitError}
		}
		for _, r := range got {
			if !seen[r.ID] {
				seen[r.ID] = true
				runs = append(runs, r)
			}
		}
	}
	if len(runs) == 0 {
		return nil, nil, ingestErr
	}
	return runs, ingestErr, nil
}

// markdownMark starts a markdown report written to a file: the HTML page
// says the same in its generator meta tag. A link reference definition
// renders as nothing and, unlike an HTML comment, is no raw HTML.
const markdownMark = "[//]: # \"written by tracehouse report\"\n\n"

// reportWritten says whether a file (its first bytes) is a report written
// before, which a new one replaces without --force.
func reportWritten(head []byte) bool {
	return bytes.HasPrefix(head, []byte(markdownMark)) ||
		(bytes.HasPrefix(head, []byte("<!DOCTYPE html>")) && bytes.Contains(head, []byte(`<meta name="generator" content="tracehouse report">`)))
}

// writeReport renders into name ("-": standard output). A file is written
// beside its final name and renamed into place, so that a failed report
// leaves no half-written file.
func writeReport(opts *ReportOptions, name string, render func(io.Writer) error) error {
	if name == "-" {
		return render(opts.IO.Out)
	}
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	if err := outfile.Write(name, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	}); err != nil {
		return err
	}
	opts.message(fmt.Sprintf("wrote %s (%.1f KiB)", name, float64(buf.Len())/1024))
	return nil
}
