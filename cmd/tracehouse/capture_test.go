package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/capture"
	"github.com/tracehouse/tracehouse/capture/capturetest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// fastCapture shrinks the capture's waits for tests.
func fastCapture(o *capture.Options) {
	o.StableFor = 100 * time.Millisecond
	o.PollInterval = 10 * time.Millisecond
	o.StopGrace = 300 * time.Millisecond
}

// smallWorkload keeps the requests few.
var smallWorkload = []string{"--warmup-steps", "1", "--num-steps", "2", "--prefill-input-len", "3",
	"--decode-output-len", "4", "--flush-timeout", "5s"}

// runCapture runs `tracehouse capture` as run() does, with the waits
// shortened.
func runCapture(t *testing.T, ctx context.Context, db string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCaptureEnv(t, ctx, db, testEnv, args...)
}

// runCaptureEnv is runCapture with the environment getenv.
func runCaptureEnv(t *testing.T, ctx context.Context, db string, getenv func(string) string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	io, out, errOut := testIO("")
	f := &Factory{IO: io, Getenv: getenv, db: db, format: "table"}
	cmd := newCmdCapture(f, func(o *CaptureOptions) error {
		o.Tune = fastCapture
		return captureRun(o)
	})
	cmd.SetArgs(args)
	cmd.SetOut(io.Out)
	cmd.SetErr(io.ErrOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	err := cmd.ExecuteContext(ctx)
	var s *silentError
	if err != nil && !errors.As(err, &s) {
		fmt.Fprintf(io.ErrOut, "tracehouse: %s\n", oneLine(err.Error()))
	}
	return exitCode(err), out.String(), errOut.String()
}

// unwrap joins the lines a message was wrapped into (continuation lines
// start with two spaces) back into one.
func unwrap(s string) string { return strings.ReplaceAll(s, "\n  ", " ") }

// traceRow is one stored trace's identity.
type traceRow struct {
	Run, Framework, Stage, Role string
	Rank                        int
}

func storedTraces(t *testing.T, db string) []string {
	t.Helper()
	w, err := schema.Open(context.Background(), db, schema.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rows, err := w.DB.Query(`SELECT r.label, r.framework, t.stage, t.role, t.rank
		FROM traces t JOIN runs r USING (run_id) ORDER BY r.label, t.stage, t.rank`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r traceRow
		if err := rows.Scan(&r.Run, &r.Framework, &r.Stage, &r.Role, &r.Rank); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %s %s %s %d", r.Run, r.Framework, r.Stage, r.Role, r.Rank))
	}
	return out
}

func runTags(t *testing.T, db, label string) string {
	t.Helper()
	w, err := schema.Open(context.Background(), db, schema.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var tags, model string
	var tp int
	err = w.DB.QueryRow(`SELECT CAST(tags AS VARCHAR), coalesce(model, ''), coalesce(tp_size, 0) FROM runs WHERE label = ?`, label).Scan(&tags, &model, &tp)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("model=%s tp=%d tags=%s", model, tp, tags)
}

func TestCaptureSGLangIngestsAndTriages(t *testing.T) {
	t.Parallel()
	out, db := t.TempDir(), filepath.Join(t.TempDir(), "w.duckdb")
	srv := capturetest.New(t, capturetest.Config{Framework: "sglang", Ranks: 2, FlushDelay: 50 * time.Millisecond,
		RankStagger: 200 * time.Millisecond, GrowFor: 150 * time.Millisecond})
	args := append([]string{"--url", srv.URL, "--output-dir", out, "--run", "sg1", "--tag", "commit=abc"}, smallWorkload...)
	code, stdout, stderr := runCapture(t, context.Background(), db, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := []string{
		"sg1 sglang decode mapping 0", "sg1 sglang decode mapping 1",
		"sg1 sglang prefill mapping 0", "sg1 sglang prefill mapping 1",
	}
	if got := storedTraces(t, db); !slices.Equal(got, want) {
		t.Errorf("traces %q\nwant %q", got, want)
	}
	tags := runTags(t, db, "sg1")
	for _, s := range []string{"model=meta-llama/Llama-3.1-8B-Instruct tp=2 ", "workload=both", "commit=abc", "decode_output_len=4", "prefill_requests=2", "num_steps=2"} {
		if !strings.Contains(tags, s) {
			t.Errorf("run: %s lacks %s", tags, s)
		}
	}
	summary := fmt.Sprintf("captured run sg1 (SGLang, meta-llama/Llama-3.1-8B-Instruct): prefill 2 file(s), decode 2 file(s), in %s\n", filepath.Join(out, "sg1"))
	if !strings.Contains(unwrap(stderr), summary) || !strings.Contains(stderr, "ingested 4 file(s)") {
		t.Errorf("stderr:\n%s\nwant %q", stderr, summary)
	}
	for _, s := range []string{"prefill: warm-up, 0/1 requests sent\n", "prefill: warm-up, 1/1 requests sent\n",
		"prefill: profiling 2 steps, 2/2 requests sent\n", "decode: waiting for traces: "} {
		if !strings.Contains(stderr, s) {
			t.Errorf("progress lines lack %q:\n%s", s, stderr)
		}
	}
	if !strings.Contains(stdout, "Triage View") || !strings.Contains(stdout, "Run: sg1") {
		t.Errorf("no triage of sg1 on stdout:\n%s", stdout)
	}
}

func TestCaptureVLLMThenNone(t *testing.T) {
	t.Parallel()
	out, db := t.TempDir(), filepath.Join(t.TempDir(), "w.duckdb")
	srv := capturetest.New(t, capturetest.Config{Framework: "vllm", Dir: out, Ranks: 2, Model: "Qwen/Qwen3-8B",
		FlushDelay: 100 * time.Millisecond})
	args := append([]string{"--url", srv.URL, "--output-dir", out, "--ranks", "2", "--then", "none", "--workload", "decode"}, smallWorkload...)
	code, stdout, stderr := runCapture(t, context.Background(), db, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("--then none printed %q", stdout)
	}
	got := storedTraces(t, db)
	if len(got) != 2 || !strings.HasPrefix(got[0], "Qwen3-8B-") || !strings.HasSuffix(got[0], " vllm decode formal 0") ||
		!strings.HasSuffix(got[1], " vllm decode formal 1") {
		t.Errorf("traces %q", got)
	}
	// The run's record: the framework as detected (not "--framework
	// flag"), the model the server reported (vLLM exposes no server
	// arguments), the capture directory as its source.
	label, _, _ := strings.Cut(got[0], " ")
	w, err := schema.Open(context.Background(), db, schema.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var evidence, model, source string
	if err := w.DB.QueryRow(`SELECT framework_evidence, coalesce(model, ''), source_dir FROM runs WHERE label = ?`, label).Scan(&evidence, &model, &source); err != nil {
		t.Fatal(err)
	}
	if evidence != `capture: /v1/models owned_by "vllm"` || model != "Qwen/Qwen3-8B" || source != filepath.Join(out, label) {
		t.Errorf("run record: evidence %q, model %q, source %q (want %q)", evidence, model, source, filepath.Join(out, label))
	}
	// Sizes read as sizes: kB for the small synthetic traces.
	if !regexp.MustCompile(`decode: traces complete: 2/2 files, \d+ kB, \d+s\n`).MatchString(stderr) {
		t.Errorf("no size in kB in:\n%s", stderr)
	}
}

// capturePair is what TestCaptureTwoTrace's capture printed.
var capturePair struct {
	code           int
	stdout, stderr string
}

// capturePairTemplate is TestCaptureTwoTrace's capture (a mapping and a
// formal SGLang server, run "pair") into a new warehouse, made once per
// test binary: TestCaptureThenCompare captures its candidate into a copy
// and compares it with pair-mapping, a capture of a server configured as
// its own.
func capturePairTemplate(t *testing.T) string {
	t.Helper()
	return schematest.TemplateFile(t, "capture-pair", func(db string) error {
		if err := os.Remove(db); err != nil { // a new warehouse, as a capture's first
			return err
		}
		out := t.TempDir()
		m := capturetest.New(t, capturetest.Config{Framework: "sglang", FlushDelay: 30 * time.Millisecond})
		f := capturetest.New(t, capturetest.Config{Framework: "sglang", Graph: true, FlushDelay: 30 * time.Millisecond})
		args := append([]string{"--mapping-url", m.URL, "--formal-url", f.URL, "--output-dir", out, "--run", "pair"}, smallWorkload...)
		capturePair.code, capturePair.stdout, capturePair.stderr = runCapture(t, context.Background(), db, args...)
		if capturePair.code != 0 {
			return fmt.Errorf("capture: exit %d: %s", capturePair.code, capturePair.stderr)
		}
		return nil
	})
}

func TestCaptureTwoTrace(t *testing.T) {
	t.Parallel()
	db := capturePairTemplate(t) // (read only)
	stdout, stderr := capturePair.stdout, capturePair.stderr
	want := []string{
		"pair-formal sglang decode formal 0", "pair-formal sglang prefill formal 0",
		"pair-mapping sglang decode mapping 0", "pair-mapping sglang prefill mapping 0",
	}
	if got := storedTraces(t, db); !slices.Equal(got, want) {
		t.Errorf("traces %q\nwant %q", got, want)
	}
	if !strings.Contains(stdout, "Mode: mapping-formal") || !strings.Contains(stdout, "Run: pair-formal (formal; mapping: pair-mapping)") {
		t.Errorf("no two-trace triage:\n%s", stdout)
	}
	if !strings.Contains(stderr, "mapping prefill: warm-up") || !strings.Contains(stderr, "formal decode: waiting for traces") {
		t.Errorf("progress lines:\n%s", stderr)
	}
}

// TestCaptureThenCompare: a capture can end in a comparison against a
// baseline run, exactly as 'tracehouse compare BASELINE RUN' would print.
// The baseline is pair-mapping, captured (capturePairTemplate) from a
// server configured as this one.
func TestCaptureThenCompare(t *testing.T) {
	t.Parallel()
	db := schematest.Copy(t, capturePairTemplate(t))
	out := t.TempDir()
	srv := capturetest.New(t, capturetest.Config{Framework: "sglang", FlushDelay: 30 * time.Millisecond})
	cand := append([]string{"--url", srv.URL, "--output-dir", out, "--run", "cand", "--then", "compare:pair-mapping"}, smallWorkload...)
	code, stdout, stderr := runCapture(t, context.Background(), db, cand...)
	if code != 0 {
		t.Fatalf("capture --then compare: exit %d\n%s", code, stderr)
	}
	_, want, _ := runCmd(t, "--db", db, "compare", "pair-mapping", "cand")
	if want == "" || stdout != want {
		t.Errorf("capture --then compare printed:\n%s\nwant what compare prints:\n%s", stdout, want)
	}
}

// TestCaptureStageTimeout: the prefill flush never arrives in time; decode
// still lands, and the exit status says something failed.
func TestCaptureStageTimeout(t *testing.T) {
	t.Parallel()
	out, db := t.TempDir(), filepath.Join(t.TempDir(), "w.duckdb")
	srv := capturetest.New(t, capturetest.Config{Framework: "sglang",
		FlushDelays: []time.Duration{700 * time.Millisecond, 20 * time.Millisecond}})
	args := append([]string{"--url", srv.URL, "--output-dir", out, "--run", "late", "--then", "none"}, smallWorkload...)
	args = append(args, "--flush-timeout", "300ms")
	code, _, stderr := runCapture(t, context.Background(), db, args...)
	if code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "error: prefill: traces not complete in "+filepath.Join(out, "late", "prefill")+" after 300ms: no new trace file appeared") ||
		!strings.Contains(unwrap(stderr), "captured run late (SGLang, meta-llama/Llama-3.1-8B-Instruct): prefill failed, decode 1 file(s)") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if got := storedTraces(t, db); !slices.Equal(got, []string{"late sglang decode mapping 0"}) {
		t.Errorf("traces %q", got)
	}
}

func TestCaptureInterrupt(t *testing.T) {
	t.Parallel()
	out, db := t.TempDir(), filepath.Join(t.TempDir(), "w.duckdb")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	armed := false
	srv := capturetest.New(t, capturetest.Config{Framework: "sglang", OnRequest: func(r capturetest.Request) {
		armed = armed || r.Path == "/start_profile"
		if armed && r.Path == "/generate" {
			cancel()
		}
	}})
	args := append([]string{"--url", srv.URL, "--output-dir", out}, smallWorkload...)
	code, _, stderr := runCapture(t, ctx, db, args...)
	if code != 1 || !strings.Contains(stderr, "tracehouse: prefill: interrupted, profiler stopped: context canceled") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	reqs := srv.Requests()
	if reqs[len(reqs)-1].Path != "/stop_profile" || srv.Profiling() {
		t.Errorf("profiler not stopped: %v", reqs[len(reqs)-1])
	}
}

func TestCaptureErrors(t *testing.T) {
	t.Parallel()
	out, db := t.TempDir(), filepath.Join(t.TempDir(), "w.duckdb")
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	vllm := capturetest.New(t, capturetest.Config{Framework: "vllm", Dir: out, NoProfiler: true})
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--url", closed.URL, "--output-dir", out}, 1,
			"tracehouse: GET " + closed.URL + "/server_info: connection refused (is the server running and listening there?)\n"},
		{[]string{"--url", vllm.URL, "--output-dir", out}, 1,
			"tracehouse: prefill: POST " + vllm.URL + "/start_profile: 404 Not Found: {\"detail\":\"Not Found\"} (the vLLM server has no profiler route: start vLLM with --profiler-config"},
		{[]string{"--output-dir", out}, 2, "tracehouse: --url: required (the server's base URL, e.g. http://localhost:30000)\n"},
		{[]string{"--url", "http://x:1"}, 2, "tracehouse: --output-dir: required"},
		{[]string{"--url", "http://x:1", "--output-dir", out, "--num-steps", "0"}, 2, "tracehouse: --num-steps 0: want 1 or more\n"},
		{[]string{"--url", "http://x:1", "--output-dir", out, "--request-timeout", "0s"}, 2, "tracehouse: --request-timeout 0s: want a positive duration, e.g. 10m\n"},
		{[]string{"--url", "http://x:1", "--output-dir", out, "--workload", "legacy"}, 2, "tracehouse: --prompt: required by the legacy workload\n"},
		{[]string{"--url", "http://x:1", "--output-dir", out, "--then", "report"}, 2, `tracehouse: --then "report": want triage, compare:SELECTOR or none`},
		{[]string{"--url", "http://x:1", "--output-dir", out, "--then", "compare:"}, 2, `tracehouse: --then "compare:": want triage, compare:SELECTOR or none`},
		{[]string{"--mapping-url", "http://x:1", "--output-dir", out}, 2, "tracehouse: --mapping-url and --formal-url go together"},
		{[]string{"--mapping-url", "x", "--formal-url", "http://x:2", "--output-dir", out}, 2, `tracehouse: --mapping-url "x": want http://HOST:PORT`},
		{[]string{"--mapping-url", "http://x:1", "--formal-url", "http://x:2", "--mapping-output-dir", out}, 2, "tracehouse: --formal-output-dir: required"},
	} {
		code, _, stderr := runCapture(t, context.Background(), db, c.args...)
		// Progress lines first, then the error on one line.
		lines := strings.SplitAfter(strings.TrimSuffix(stderr, "\n"), "\n")
		if last := lines[len(lines)-1]; code != c.code || !strings.HasPrefix(last+"\n", c.msg) {
			t.Errorf("%v: exit %d, stderr %q\nwant %d, %q", c.args, code, stderr, c.code, c.msg)
		}
	}
	if vllm.Profiling() {
		t.Error("profiler left running")
	}
}

// TestCaptureOptions captures the parsed options (cli/cli style).
func TestCaptureOptions(t *testing.T) {
	t.Parallel()
	io, _, _ := testIO("")
	f := &Factory{IO: io, Getenv: testEnv}
	var got *CaptureOptions
	cmd := newCmdCapture(f, func(o *CaptureOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--mapping-url", "http://a:1", "--formal-url", "http://b:2", "--output-dir", "o",
		"--formal-output-dir", "fo", "--run", "r", "--framework", "SGLang", "--then", "compare:@latest~1", "--tag", "k=v",
		"--request-timeout", "90s"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Then != "compare" || got.Baseline != "@latest~1" || got.Tags["k"] != "v" || got.Capture.NumSteps != 5 || got.Capture.WarmupSteps != 10 ||
		got.Capture.PrefillInputLen != 4090 || got.Capture.DecodeOutputLen != 2048 || got.Capture.FlushTimeout != 300*time.Second || got.Capture.Workload != "both" {
		t.Errorf("options %+v", got)
	}
	m, fo := got.captureOptions("mapping"), got.captureOptions("formal")
	if m.URL != "http://a:1" || m.OutputDir != "o" || m.Run != "r-mapping" || m.Role != "mapping" || m.Framework != "sglang" ||
		fo.URL != "http://b:2" || fo.OutputDir != "fo" || fo.Run != "r-formal" || fo.Role != "formal" ||
		m.RequestTimeout != 90*time.Second || fo.RequestTimeout != 90*time.Second {
		t.Errorf("library options %+v\n%+v", m, fo)
	}
}

// TestCaptureSignalStopsProfiler: SIGTERM or SIGHUP (a dropped ssh session)
// while /start_profile has armed the profiler but not answered: the
// tracehouse process stops the profiler and exits 130 (interrupted).
func TestCaptureSignalStopsProfiler(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			armed := make(chan struct{})
			var once sync.Once
			// The directories come before the server: its cleanup (run
			// first) waits for the writers /stop_profile starts.
			db, out := filepath.Join(t.TempDir(), "w.duckdb"), t.TempDir()
			var srv *capturetest.Server
			srv = capturetest.New(t, capturetest.Config{Framework: "sglang",
				Hang: map[string]time.Duration{"/start_profile": time.Minute},
				OnRequest: func(r capturetest.Request) {
					if r.Path == "/start_profile" {
						go func() {
							for !srv.Profiling() {
								time.Sleep(time.Millisecond)
							}
							once.Do(func() { close(armed) })
						}()
					}
				}})
			cmd := exec.Command(os.Args[0], "--db", db, "capture", "--url", srv.URL,
				"--output-dir", out, "--workload", "prefill", "--warmup-steps", "0", "--then", "none")
			cmd.Env = append(os.Environ(), "TRACEHOUSE_TEST_ROLE=main", "TRACEHOUSE_THREADS=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-armed:
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				t.Fatalf("the profiler was never armed: %s", stderr.String())
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 130 {
				t.Errorf("want exit 130, got %v (stderr %q)", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "tracehouse: prefill: interrupted, profiler stopped: context canceled\n") {
				t.Errorf("stderr %q", stderr.String())
			}
			reqs := srv.Requests()
			if last := reqs[len(reqs)-1]; last.Path != "/stop_profile" || srv.Profiling() {
				t.Errorf("last request %v, profiling %v", last, srv.Profiling())
			}
		})
	}
}
