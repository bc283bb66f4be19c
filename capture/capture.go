// Package capture drives a running SGLang, vLLM, TensorRT-LLM or
// TokenSpeed server's torch profiler over HTTP and waits for the trace
// files it writes (README "Capturing from a live server"): it tells the framework from the URL, sends
// warm-up requests, arms the profiler, sends the probes of each stage
// (prefill, decode, or a legacy prompt), stops the profiler (also on error
// and on cancel), and waits until every rank's file is new, complete and no
// longer growing. Ingesting the files is the caller's next step.
package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tracehouse/tracehouse/outfile"
	"github.com/tracehouse/tracehouse/vocab"
)

// ByStage is the directory of a capture whose server splits EXTEND and
// DECODE itself (Options.ProfileByStage): the file names carry the stage.
const ByStage = "by-stage"

// filePrefix starts the names of the files SGLang and TokenSpeed write
// (profile_prefix, profile_id). It is not the run label, which could hold
// tokens (tp8, decode) that ingest reads from file names.
const filePrefix = "tracehouse"

// Result is what a capture produced.
type Result struct {
	Server    *Server
	Framework string
	Model     string
	// Run is the label; Dir is OutputDir/Run, holding one directory per
	// stage.
	Run  string
	Role string
	Dir  string
	// Tags record the workload, for the run's tags.
	Tags map[string]string
	// Stages in capture order; a stage that failed has Err set and no
	// Files.
	Stages []StageResult
}

// StageResult is one profiling window.
type StageResult struct {
	// Stage is prefill, decode, mixed (legacy) or by-stage.
	Stage string
	// Dir is where its traces are (OutputDir/Run/Stage).
	Dir string
	// Files are the complete new trace files, paths in Dir.
	Files []string
	// ServerArgs is the saved server_args.json in Dir, "" when the server
	// exposes none.
	ServerArgs string
	Err        error
}

// Files are the trace files of every stage that completed.
func (r *Result) Files() []string {
	var out []string
	for _, s := range r.Stages {
		out = append(out, s.Files...)
	}
	return out
}

// shape is one kind of request.
type shape struct {
	stage     string // prefill, decode, mixed
	inputLen  int    // words, when prompt is ""
	prompt    string // legacy
	outputLen int
	requests  int // probes while profiling
	suffix    string
}

// window is one arming of the profiler.
type window struct {
	name   string // directory: prefill, decode, mixed, by-stage
	shapes []shape
}

// requestsFor is how many requests of outputLen tokens cover steps forward
// steps (each request makes one prefill step and outputLen-1 decode steps).
func requestsFor(steps, outputLen int) int {
	return max(1, (steps+outputLen-1)/outputLen)
}

func plan(o Options) []window {
	if o.Workload == Legacy {
		return []window{{name: vocab.Mixed, shapes: []shape{{stage: vocab.Mixed, prompt: o.Prompt,
			outputLen: o.MaxNewTokens, requests: requestsFor(o.NumSteps, o.MaxNewTokens)}}}}
	}
	pre := shape{stage: vocab.Prefill, inputLen: o.PrefillInputLen, outputLen: o.PrefillOutputLen,
		requests: requestsFor(o.NumSteps, o.PrefillOutputLen), suffix: "EXTEND"}
	dec := shape{stage: vocab.Decode, inputLen: o.DecodeInputLen, outputLen: o.DecodeOutputLen,
		requests: requestsFor(o.NumSteps, o.DecodeOutputLen), suffix: "DECODE"}
	var shapes []shape
	switch o.Workload {
	case Both:
		shapes = []shape{pre, dec}
	case Prefill:
		shapes = []shape{pre}
	case Decode:
		shapes = []shape{dec}
	}
	if o.ProfileByStage {
		return []window{{name: ByStage, shapes: shapes}}
	}
	var out []window
	for _, s := range shapes {
		out = append(out, window{name: s.stage, shapes: []shape{s}})
	}
	return out
}

// workloadTags records the workload in the run's tags.
func workloadTags(o Options, srv *Server) map[string]string {
	itoa := strconv.Itoa
	t := map[string]string{
		"workload":     o.Workload,
		"warmup_steps": itoa(o.WarmupSteps),
		"num_steps":    itoa(o.NumSteps),
		"capture_url":  o.URL,
	}
	if srv.Model != "" {
		t["model"] = srv.Model
	}
	if o.ProfileByStage {
		t["profile_by_stage"] = "true"
	}
	for _, w := range plan(o) {
		for _, s := range w.shapes {
			switch s.stage {
			case vocab.Prefill:
				t["prefill_input_len"], t["prefill_output_len"], t["prefill_requests"] = itoa(s.inputLen), itoa(s.outputLen), itoa(s.requests)
			case vocab.Decode:
				t["decode_input_len"], t["decode_output_len"], t["decode_requests"] = itoa(s.inputLen), itoa(s.outputLen), itoa(s.requests)
			case vocab.Mixed:
				t["prompt_words"], t["max_new_tokens"], t["requests"] = itoa(len(strings.Fields(s.prompt))), itoa(s.outputLen), itoa(s.requests)
			}
		}
	}
	return t
}

// DefaultLabel is the run label of a capture without one: the model's last
// path element and the time (and the two-trace role).
func DefaultLabel(model string, now time.Time, role string) string {
	base := path.Base(strings.TrimRight(strings.ReplaceAll(model, `\`, "/"), "/"))
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	label := strings.Trim(b.String(), "-.")
	if label == "" {
		label = "capture"
	}
	label += "-" + now.Format("20060102-150405")
	if role != "" {
		label += "-" + role
	}
	return label
}

// Capture profiles the server at opt.URL: one window per stage of the
// workload, each waited for until its files are complete. A stage whose
// files do not arrive in time fails alone (its StageResult.Err, also in
// the returned error) and the next stage still runs; any other failure
// (refused connection, HTTP error, cancel) stops the capture, after
// stopping the profiler if it was armed. The result holds what completed
// either way.
func Capture(ctx context.Context, opt Options) (*Result, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.withTuning()
	cp := &capturer{opt: opt, c: &client{base: strings.TrimRight(opt.URL, "/"), hc: opt.Client, timeout: opt.RequestTimeout}}
	cp.report(Progress{Phase: PhaseDetect})
	srv, err := detect(ctx, cp.c, opt.Framework)
	if err != nil {
		return nil, err
	}
	if opt.ProfileByStage && srv.Framework != vocab.SGLang && srv.Framework != vocab.TokenSpeed {
		return nil, &OptionError{Option: "profile-by-stage", Want: "only SGLang and TokenSpeed split stages themselves; this is " + vocab.FrameworkName(srv.Framework)}
	}
	out, err := filepath.Abs(opt.OutputDir)
	if err != nil {
		return nil, err
	}
	cp.out = out
	cp.srv = srv
	cp.d = &driver{fw: srv.Framework, c: cp.c, model: srv.ModelID}
	run := opt.Run
	if run == "" {
		run = DefaultLabel(srv.Model, opt.Now(), opt.Role)
	}
	res := &Result{Server: srv, Framework: srv.Framework, Model: srv.Model, Run: run, Role: opt.Role,
		Dir: filepath.Join(out, run), Tags: workloadTags(opt, srv)}
	var timeouts []error
	for _, w := range plan(opt) {
		sr, err := cp.window(ctx, res.Dir, w)
		var te *TimeoutError
		if errors.As(err, &te) {
			sr.Err = err
			res.Stages = append(res.Stages, sr)
			timeouts = append(timeouts, err)
			continue
		}
		if err != nil {
			return res, err
		}
		res.Stages = append(res.Stages, sr)
	}
	return res, errors.Join(timeouts...)
}

// Pair captures a two-trace pair: the mapping server (CUDA graphs off)
// then the formal one (the real config), their Role set, and when neither
// names its run, labels sharing one timestamp. A mapping capture that
// fails outright stops the pair.
func Pair(ctx context.Context, mapping, formal Options) ([]*Result, error) {
	mapping.Role, formal.Role = vocab.Mapping, vocab.Formal
	if err := mapping.Validate(); err != nil {
		return nil, err
	}
	if err := formal.Validate(); err != nil {
		return nil, err
	}
	if mapping.Run != "" && mapping.Run == formal.Run {
		return nil, &OptionError{Option: "run", Value: strconv.Quote(mapping.Run), Want: "the mapping and formal runs need two labels"}
	}
	if mapping.Now == nil && formal.Now == nil {
		now := time.Now()
		mapping.Now = func() time.Time { return now }
		formal.Now = mapping.Now
	}
	var out []*Result
	m, errM := Capture(ctx, mapping)
	if m != nil {
		out = append(out, m)
	}
	if errM != nil && !isTimeout(errM) {
		return out, fmt.Errorf("mapping: %w", errM)
	}
	f, errF := Capture(ctx, formal)
	if f != nil {
		out = append(out, f)
	}
	var errs []error
	if errM != nil {
		errs = append(errs, fmt.Errorf("mapping: %w", errM))
	}
	if errF != nil {
		errs = append(errs, fmt.Errorf("formal: %w", errF))
	}
	return out, errors.Join(errs...)
}

// isTimeout says whether err only reports stages that timed out.
func isTimeout(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !isTimeout(e) {
				return false
			}
		}
		return true
	}
	var te *TimeoutError
	return errors.As(err, &te)
}

// capturer is one capture in progress.
type capturer struct {
	opt   Options
	c     *client
	d     *driver
	srv   *Server
	out   string // absolute OutputDir
	probe int    // requests sent, numbering the prompts
	stage string
}

func (cp *capturer) report(p Progress) {
	if cp.opt.Progress == nil {
		return
	}
	p.Role, p.Stage = cp.opt.Role, cp.stage
	cp.opt.Progress(p)
}

// text is the prompt of the next request: one word repeated after a token
// unique to the request, so that no prefix cache skips the prefill.
func (cp *capturer) text(s shape) string {
	lead := "probe_" + strconv.Itoa(cp.probe)
	cp.probe++
	if s.prompt != "" {
		return lead + " " + s.prompt
	}
	return lead + strings.Repeat(" hello", s.inputLen-1)
}

// window captures one profiling window into runDir/w.name.
func (cp *capturer) window(ctx context.Context, runDir string, w window) (sr StageResult, err error) {
	cp.stage = w.name
	opt, d := cp.opt, cp.d
	dir := filepath.Join(runDir, w.name)
	sr = StageResult{Stage: w.name, Dir: dir}
	stopped := false // by the deferred stop below
	defer func() {
		var te *TimeoutError
		if err != nil && !errors.As(err, &te) { // a TimeoutError names its stage
			err = fmt.Errorf("%s: %w", w.name, interrupted(ctx, err, stopped))
		}
	}()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return sr, err
	}
	if cp.srv.Info != nil {
		sr.ServerArgs = filepath.Join(dir, "server_args.json")
		if err := os.WriteFile(sr.ServerArgs, append(append([]byte(nil), cp.srv.Info...), '\n'), 0o644); err != nil {
			return sr, err
		}
	}
	watchDir := dir
	if d.writesOwnDir() {
		watchDir = cp.out
	}

	// Warm-up: requests of each shape before the profiler is armed.
	total := opt.WarmupSteps * len(w.shapes)
	sent := 0
	cp.report(Progress{Phase: PhaseWarmup, RequestsWant: total})
	for _, s := range w.shapes {
		for i := 0; i < opt.WarmupSteps; i++ {
			if err := d.generate(ctx, cp.text(s), s.outputLen); err != nil {
				return sr, err
			}
			sent++
			cp.report(Progress{Phase: PhaseWarmup, Requests: sent, RequestsWant: total})
		}
	}

	before, err := snapshot(watchDir)
	if err != nil {
		return sr, err
	}
	var suffixes []string
	if w.name == ByStage {
		for _, s := range w.shapes {
			suffixes = append(suffixes, s.suffix)
		}
	}
	prefix := filePrefix + "-" + w.name
	if w.name == ByStage {
		prefix = filePrefix
	}
	// From the start request on, never leave the profiler running: a
	// start whose answer never came (cancelled, timed out, cut) may have
	// armed it, so it is stopped too; only a start the server refused
	// (an HTTP error) or never received armed nothing.
	armed := true
	defer func() {
		if armed && err != nil {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopOnExit)
			defer cancel()
			if serr := d.stop(sctx); serr != nil {
				err = fmt.Errorf("%w (and stopping the profiler failed: %v)", err, serr)
			} else {
				stopped = true
			}
		}
	}()
	if err := d.start(ctx, profileRequest{dir: dir, prefix: prefix, numSteps: opt.NumSteps, byStage: w.name == ByStage}); err != nil {
		var h *HTTPError
		if errors.As(err, &h) || errors.Is(err, syscall.ECONNREFUSED) {
			armed = false
		}
		return sr, err
	}

	total, sent = 0, 0
	for _, s := range w.shapes {
		total += s.requests
	}
	cp.report(Progress{Phase: PhaseProfile, Steps: opt.NumSteps, RequestsWant: total})
	for _, s := range w.shapes {
		for i := 0; i < s.requests; i++ {
			if err := d.generate(ctx, cp.text(s), s.outputLen); err != nil {
				return sr, err
			}
			sent++
			cp.report(Progress{Phase: PhaseProfile, Steps: opt.NumSteps, Requests: sent, RequestsWant: total})
		}
	}

	wt := &watch{dir: watchDir, before: before, want: expect(d.fw, cp.srv.info, opt.Ranks, suffixes),
		start: time.Now(), opt: opt, report: cp.report}
	cp.report(Progress{Phase: PhaseStop})
	if d.stopsItself() {
		// The server stops after num_steps by itself; stop it only when
		// nothing has started to appear.
		grace := time.Now().Add(opt.StopGrace)
		for armed {
			seen, err := wt.seen()
			if err != nil {
				return sr, err
			}
			if seen {
				armed = false
				break
			}
			if !time.Now().Before(grace) {
				break
			}
			select {
			case <-ctx.Done():
				return sr, ctx.Err()
			case <-time.After(opt.PollInterval):
			}
		}
	}
	if armed {
		// One attempt, not cut short by a cancel: a failed stop is not
		// retried, an interrupted one would leave the profiler running.
		armed = false
		if err := d.stop(context.WithoutCancel(ctx)); err != nil {
			return sr, err
		}
	}

	wt.start = time.Now() // the flush timeout counts from the stop
	names, err := wt.wait(ctx)
	if err != nil {
		var te *TimeoutError
		if errors.As(err, &te) {
			te.Stage = w.name
			te.Hint = flushHint(d.fw, watchDir)
		}
		return sr, err
	}
	for _, name := range names {
		src := filepath.Join(watchDir, name)
		if watchDir != dir {
			// The server's own directory: copy, keeping the original.
			if err := copyFile(src, filepath.Join(dir, name)); err != nil {
				return sr, err
			}
		}
		sr.Files = append(sr.Files, filepath.Join(dir, name))
	}
	var size int64
	for _, t := range wt.files {
		size += t.size
	}
	cp.report(Progress{Phase: PhaseDone, Files: len(names), FilesWant: len(wt.want.labels), Bytes: size, Waited: time.Since(wt.start)})
	return sr, nil
}

// stopOnExit bounds the stop sent when a capture fails or is interrupted
// while the profiler may be armed (less when RequestTimeout is shorter).
const stopOnExit = 30 * time.Second

// interrupted rewords a cancelled capture's error.
func interrupted(ctx context.Context, err error, stopped bool) error {
	if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		return err
	}
	if stopped {
		return fmt.Errorf("interrupted, profiler stopped: %w", err)
	}
	return fmt.Errorf("interrupted: %w", err)
}

func flushHint(fw, dir string) string {
	switch fw {
	case vocab.VLLM:
		return "vLLM writes where its --profiler-config torch_profiler_dir (or VLLM_TORCH_PROFILER_DIR) says: is that " + dir + "?"
	case vocab.TRTLLM:
		return "TensorRT-LLM writes the file TLLM_TORCH_PROFILE_TRACE names: is it in " + dir + "?"
	}
	return "the server writes traces on a background thread, which can take seconds per profiled second, into " + dir + " as its own machine sees it: is that path shared? a longer flush timeout may help"
}

// copyFile copies src to dst through a temporary name, so dst is never
// half written.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return outfile.Write(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}
