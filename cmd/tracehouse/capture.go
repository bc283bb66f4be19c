package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/assemble"
	"github.com/tracehouse/tracehouse/capture"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/target"
	"github.com/tracehouse/tracehouse/vocab"
)

// What capture does once the traces are ingested (--then).
const (
	thenTriage  = "triage"
	thenCompare = "compare"
	thenNone    = "none"
)

// CaptureOptions are the parsed flags of `tracehouse capture`.
type CaptureOptions struct {
	common
	Format report.Format
	// Capture is the library's options for the one server of a one-run
	// capture, filled by the flags; a two-trace capture takes its two
	// servers from MappingURL and FormalURL (captureOptions).
	Capture capture.Options
	// MappingURL and FormalURL are the two servers of a two-trace capture,
	// each writing to its own directory when given (default
	// Capture.OutputDir).
	MappingURL       string
	FormalURL        string
	MappingOutputDir string
	FormalOutputDir  string
	Tags             map[string]string
	// Then is triage, compare or none; Baseline is compare's selector.
	Then     string
	Baseline string
	// Tune, when set, adjusts the library's options before the capture
	// (tests shorten the waits).
	Tune func(*capture.Options)
}

func newCmdCapture(f *Factory, runF func(*CaptureOptions) error) *cobra.Command {
	opts := &CaptureOptions{Capture: capture.Defaults()}
	c := &opts.Capture // the flags fill it; its defaults are theirs
	var tags []string
	var then string
	cmd := &cobra.Command{
		Use:   "capture --url URL --output-dir DIR",
		Short: "Profile a running SGLang, vLLM, TensorRT-LLM or TokenSpeed server",
		Long: `Drive a running server's torch profiler over HTTP, wait for its trace files,
ingest them as a new run and print its triage.

The server writes the trace files itself: --output-dir must be a directory
both the server and tracehouse can see (the same machine, or a shared
mount). vLLM and TensorRT-LLM write into a directory of their own, which
--output-dir must name (vLLM: its torch_profiler_dir); their new files are
copied below it. Traces land in DIR/RUN/<stage>/, next to the server's
arguments (server_args.json) when it exposes them.

The default workload (--workload both) captures prefill (long prompts, one
output token) then decode (short prompts, long outputs), each after
--warmup-steps requests of its shape; prefill or decode capture one of
them, legacy sends --prompt with --max-new-tokens. The workload is recorded
in the run's tags.

After stopping the profiler, capture waits until every rank's file is new
(never a file that was there before), complete and no longer growing, up to
--flush-timeout per stage; a stage that times out is reported and left out,
the other still lands. Interrupting (Ctrl-C, SIGTERM, or SIGHUP from a
dropped ssh session) or any error stops the profiler first, also while
/start_profile has not answered yet. Each request waits at most
--request-timeout, so a hung server keeps the profiler armed no longer;
answers are read up to 1 MiB.

Two-trace capture (--mapping-url with CUDA graphs off, --formal-url with the
real config) makes two runs, RUN-mapping and RUN-formal, and prints their
two-trace triage.

--framework is detected from the URL when omitted.`,
		Example: `  tracehouse capture --url http://localhost:30000 --output-dir /shared/profiles
  tracehouse capture --url http://localhost:8000 \
    --output-dir /tmp/vllm-profile --run qwen-tp2 --workload decode
  tracehouse capture --mapping-url http://gpu1:30000 \
    --formal-url http://gpu2:30000 --output-dir /shared/profiles
  tracehouse capture --url http://localhost:30000 \
    --output-dir /shared/profiles --then none --tag commit=abc123`,
		Args:        maxArgs(0),
		Annotations: map[string]string{writesAnnotation: "yes", createsAnnotation: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.common = f.common(cmd)
			var err error
			if opts.Format, err = f.outputFormat(); err != nil {
				return err
			}
			if opts.Tags, err = parseTags(tags); err != nil {
				return err
			}
			if err := opts.parse(then); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return captureRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&c.URL, "url", "", "the server's base `URL`, e.g. http://localhost:30000")
	fl.StringVar(&c.OutputDir, "output-dir", "", "`DIR` for the traces, seen by both the server and tracehouse")
	fl.StringVar(&c.Framework, "framework", "", "sglang, vllm, trtllm or tokenspeed (default: detect from the URL)")
	fl.StringVar(&c.Run, "run", "", "label the run `LABEL` (default: the model name and the time)")
	fl.StringVar(&c.Workload, "workload", c.Workload, "both, prefill, decode or legacy")
	fl.IntVar(&c.WarmupSteps, "warmup-steps", c.WarmupSteps, "requests of each stage's shape before the profiler is armed")
	fl.IntVar(&c.NumSteps, "num-steps", c.NumSteps, "forward steps to capture per stage")
	fl.IntVar(&c.PrefillInputLen, "prefill-input-len", c.PrefillInputLen, "prefill prompt length in words")
	fl.IntVar(&c.PrefillOutputLen, "prefill-output-len", c.PrefillOutputLen, "prefill output length in tokens")
	fl.IntVar(&c.DecodeInputLen, "decode-input-len", c.DecodeInputLen, "decode prompt length in words")
	fl.IntVar(&c.DecodeOutputLen, "decode-output-len", c.DecodeOutputLen, "decode output length in tokens")
	fl.StringVar(&c.Prompt, "prompt", "", "with --workload legacy: the prompt to send")
	fl.IntVar(&c.MaxNewTokens, "max-new-tokens", c.MaxNewTokens, "with --workload legacy: tokens to generate")
	fl.BoolVar(&c.ProfileByStage, "profile-by-stage", false, "SGLang, TokenSpeed: one profiling window the server splits into EXTEND and DECODE files itself")
	fl.IntVar(&c.Ranks, "ranks", 0, "trace files (ranks) to wait for per stage (default: TP x PP when the server says)")
	fl.DurationVar(&c.FlushTimeout, "flush-timeout", c.FlushTimeout, "how long to wait for a stage's trace files")
	fl.DurationVar(&c.RequestTimeout, "request-timeout", c.RequestTimeout, "how long one request (a probe, the profiler's start or stop) may take")
	fl.StringArrayVar(&tags, "tag", nil, "attach `key=value` to the run (repeatable)")
	fl.StringVar(&then, "then", thenTriage, "after ingesting: triage, compare:SELECTOR (against a baseline run) or none")
	fl.StringVar(&opts.MappingURL, "mapping-url", "", "two-trace capture: the `URL` of the server with CUDA graphs off")
	fl.StringVar(&opts.FormalURL, "formal-url", "", "two-trace capture: the `URL` of the server with the real config")
	fl.StringVar(&opts.MappingOutputDir, "mapping-output-dir", "", "two-trace capture: the mapping server's `DIR` (default --output-dir)")
	fl.StringVar(&opts.FormalOutputDir, "formal-output-dir", "", "two-trace capture: the formal server's `DIR` (default --output-dir)")
	_ = cmd.RegisterFlagCompletionFunc("framework", cobra.FixedCompletions(vocab.Frameworks, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("workload", cobra.FixedCompletions(capture.Workloads, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("then", cobra.FixedCompletions([]string{thenTriage, thenCompare + ":", thenNone}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.MarkFlagDirname("output-dir")
	return cmd
}

// parse checks the flags together; every mistake is a usage error.
func (o *CaptureOptions) parse(then string) error {
	pair := o.MappingURL != "" || o.FormalURL != ""
	switch {
	case pair && (o.MappingURL == "" || o.FormalURL == ""):
		return usagef("--mapping-url and --formal-url go together (two-trace capture)")
	case pair && o.Capture.URL != "":
		return usagef("--url captures one server; a two-trace capture takes --mapping-url and --formal-url instead")
	case !pair && (o.MappingOutputDir != "" || o.FormalOutputDir != ""):
		return usagef("--mapping-output-dir and --formal-output-dir go with --mapping-url and --formal-url")
	}
	kind, sel, _ := strings.Cut(then, ":")
	switch {
	case kind == thenCompare && strings.TrimSpace(sel) != "":
		o.Then, o.Baseline = thenCompare, strings.TrimSpace(sel)
	case (kind == thenTriage || kind == thenNone) && !strings.Contains(then, ":"):
		o.Then = kind
	default:
		return usagef("--then %q: want triage, compare:SELECTOR or none", then)
	}
	if o.Capture.Run != "" {
		if err := ingest.CheckLabel(o.Capture.Run); err != nil {
			return usagef("--run: %v", err)
		}
	}
	if o.Then == thenTriage && o.Format == report.CSV {
		return usagef("--format csv writes one file per table: use --then none, then 'tracehouse triage RUN --format csv --out DIR'")
	}
	if pair {
		for _, role := range vocab.Roles {
			if err := o.captureOptions(role).Validate(); err != nil {
				return optionError(err, role)
			}
		}
		return nil
	}
	return optionError(o.captureOptions("").Validate(), "")
}

// optionError turns the library's option error into a usage error naming
// the flag (for a two-trace capture, the role's --mapping-url and the like).
func optionError(err error, role string) error {
	var oe *capture.OptionError
	if !errors.As(err, &oe) {
		return err
	}
	e := *oe
	if role != "" && (e.Option == "url" || e.Option == "output-dir") {
		e.Option = role + "-" + e.Option
	}
	return usagef("--%s", e.Error())
}

// captureOptions are the library's options for one server: role "" for a
// one-run capture, else mapping or formal (its URL and directory, the run
// label suffixed with the role).
func (o *CaptureOptions) captureOptions(role string) capture.Options {
	c := o.Capture
	c.Role = role
	switch role {
	case vocab.Mapping:
		c.URL = o.MappingURL
		if o.MappingOutputDir != "" {
			c.OutputDir = o.MappingOutputDir
		}
	case vocab.Formal:
		c.URL = o.FormalURL
		if o.FormalOutputDir != "" {
			c.OutputDir = o.FormalOutputDir
		}
	}
	if role != "" && c.Run != "" {
		c.Run += "-" + role
	}
	c.Framework = strings.ToLower(c.Framework)
	if o.Tune != nil {
		o.Tune(&c)
	}
	return c
}

func captureRun(opts *CaptureOptions) error {
	ctx := opts.Ctx
	prog := &captureProgress{io: opts.IO}
	var results []*capture.Result
	var capErr error
	if opts.MappingURL != "" {
		m, f := opts.captureOptions(vocab.Mapping), opts.captureOptions(vocab.Formal)
		m.Progress, f.Progress = prog.update, prog.update
		results, capErr = capture.Pair(ctx, m, f)
	} else {
		c := opts.captureOptions("")
		c.Progress = prog.update
		r, err := capture.Capture(ctx, c)
		if r != nil {
			results = append(results, r)
		}
		capErr = err
	}
	prog.finish()
	for _, r := range results {
		for _, n := range r.Server.Notes {
			opts.message("note: " + oneLine(n))
		}
	}
	if ctx.Err() != nil {
		return capErr // interrupted: nothing is ingested
	}
	var stageErrs []error
	var files int
	for _, r := range results {
		for _, s := range r.Stages {
			if s.Err != nil {
				stageErrs = append(stageErrs, s.Err)
			}
		}
		files += len(r.Files())
	}
	// A fatal error ended the capture: it is returned after what landed
	// is ingested. Stages that timed out are reported here.
	fatal := fatalOf(capErr)
	for _, e := range stageErrs {
		fmt.Fprintf(opts.IO.ErrOut, "error: %s\n", oneLine(e.Error()))
	}
	if files == 0 {
		if fatal != nil {
			return fatal
		}
		if len(stageErrs) > 0 {
			return &silentError{exitError}
		}
		return errors.New("no trace was captured")
	}

	w, err := opts.Warehouse(ctx, true)
	if err != nil {
		var dirs []string
		for _, r := range results {
			dirs = append(dirs, r.Dir)
		}
		return fmt.Errorf("%w; the traces are in %s: ingest them with 'tracehouse ingest --run LABEL DIR'", err, strings.Join(dirs, ", "))
	}
	defer w.Close()
	var failed error
	for _, r := range results {
		if len(r.Files()) == 0 {
			continue
		}
		tags := map[string]string{}
		for k, v := range r.Tags {
			tags[k] = v
		}
		for k, v := range opts.Tags {
			tags[k] = v
		}
		// The run's record says what the capture learned: how the framework
		// was told, the model the server reported (vLLM and TensorRT-LLM
		// expose no server arguments that would name it), and the capture
		// directory as its source.
		evidence := "capture: " + r.Server.Evidence
		if r.Server.Evidence == "given" {
			evidence = "--framework flag"
		}
		pctx, iopt, done := withProgress(ctx, opts.common, ingest.Options{Run: r.Run, Framework: r.Framework, Role: r.Role, Tags: tags,
			FrameworkEvidence: evidence, Model: r.Model, SourceDir: r.Dir})
		res, err := ingest.Ingest(pctx, w, r.Files(), iopt)
		done()
		if err != nil {
			return err
		}
		if err := summarize(opts.IO, res); err != nil {
			failed = err
		}
	}
	// The saved overlap, steps and fuse rows of every captured run, shown as
	// phases on a terminal.
	fctx, _, done := withProgress(ctx, opts.common, ingest.Options{})
	err = target.Finish(fctx, w.DB, catalog.Default())
	done()
	if err != nil {
		return err
	}
	for _, r := range results {
		opts.message(captureSummary(r))
	}
	if fatal != nil {
		return fatal
	}
	if err := captureThen(opts, w, results); err != nil {
		return err
	}
	if failed != nil || len(stageErrs) > 0 {
		return &silentError{exitError}
	}
	return nil
}

// fatalOf is err without the stage timeouts it joins (reported with
// their stages), nil when nothing else is left.
func fatalOf(err error) error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			if f := fatalOf(e); f != nil {
				out = append(out, f)
			}
		}
		return errors.Join(out...)
	}
	var te *capture.TimeoutError
	if errors.As(err, &te) {
		return nil
	}
	return err
}

// captureSummary is the line saying what a capture stored.
func captureSummary(r *capture.Result) string {
	var parts []string
	for _, s := range r.Stages {
		if s.Err == nil {
			parts = append(parts, fmt.Sprintf("%s %d file(s)", s.Stage, len(s.Files)))
		} else {
			parts = append(parts, s.Stage+" failed")
		}
	}
	what := vocab.FrameworkName(r.Framework)
	if r.Model != "" {
		what += ", " + r.Model
	}
	return fmt.Sprintf("captured run %s (%s): %s, in %s", r.Run, what, strings.Join(parts, ", "), r.Dir)
}

// captureThen runs --then on the captured runs.
func captureThen(opts *CaptureOptions, w *schema.Warehouse, results []*capture.Result) error {
	if opts.Then == thenNone {
		return nil
	}
	var runs []triageTarget
	for _, r := range results {
		if len(r.Files()) == 0 {
			continue
		}
		run, err := target.SelectRun(opts.Ctx, w, r.Run)
		var none *target.NoRunError
		var empty *target.EmptyRunError
		if errors.As(err, &none) || errors.As(err, &empty) {
			continue // every file failed to ingest (reported)
		}
		if err != nil {
			return err
		}
		runs = append(runs, triageTarget{run: run})
	}
	pair := opts.MappingURL != ""
	if len(runs) == 0 || (pair && len(runs) != 2) {
		opts.message("note: not every run of the capture landed: no " + opts.Then)
		return nil
	}
	if pair {
		m := runs[0].run
		runs = []triageTarget{{run: runs[1].run, mapping: &m}}
	}
	if opts.Then == thenCompare {
		rep, ingestErr, err := compareArgs(opts.common, w, catalog.LazyDefault(), opts.Baseline, runs[0].run.Label,
			assemble.CompareOptions{Gates: assemble.DefaultGates()})
		if err != nil {
			return err
		}
		if err := printCompare(opts.common, opts.Format, "", rep); err != nil {
			return err
		}
		return ingestErr
	}
	return triageRender(opts.common, opts.Format, "", w, runs, defaultSections().triage("auto", 0))
}

// captureProgress prints the capture's progress on stderr: a line
// rewritten in place on a terminal, else one line per phase.
type captureProgress struct {
	io        *IOStreams
	last      string
	completed bool // off a terminal: the last phase's completion was printed
	drawn     time.Time
	open      bool // a line without its newline is on screen
}

func (p *captureProgress) update(pr capture.Progress) {
	key := pr.Role + "/" + pr.Stage + "/" + pr.Phase
	if !p.io.ErrTTY {
		// One line as each phase starts, and one as its requests are all
		// sent (a log then shows "10/10 requests sent", not only "0/10").
		complete := pr.RequestsWant > 0 && pr.Requests == pr.RequestsWant
		if key != p.last || complete && !p.completed {
			if key != p.last {
				p.completed = false
			}
			p.last = key
			p.completed = p.completed || complete
			fmt.Fprintln(p.io.ErrOut, pr.String())
		}
		return
	}
	if key == p.last && time.Since(p.drawn) < 100*time.Millisecond {
		return
	}
	p.last, p.drawn = key, time.Now()
	// A line longer than the terminal would wrap, and "\r\033[K" clears
	// only its last row: it is cut to the width (one column spare).
	fmt.Fprintf(p.io.ErrOut, "\r\033[K%s", report.FitLine(pr.String(), max(0, p.io.TermCols-1)))
	p.open = true
	if pr.Phase == capture.PhaseDone {
		fmt.Fprintln(p.io.ErrOut)
		p.open = false
	}
}

func (p *captureProgress) finish() {
	if p.open {
		fmt.Fprint(p.io.ErrOut, "\r\033[K")
		p.open = false
	}
}
