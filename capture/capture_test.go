package capture_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/tracehouse/tracehouse/capture"
	"github.com/tracehouse/tracehouse/capture/capturetest"
)

// fast are options with the tuning shrunk for tests: nothing waits long.
func fast(url, out string) capture.Options {
	o := capture.Defaults()
	o.URL, o.OutputDir, o.Run = url, out, "run1"
	o.WarmupSteps, o.NumSteps = 2, 2
	o.PrefillInputLen, o.PrefillOutputLen = 3, 1
	o.DecodeInputLen, o.DecodeOutputLen = 1, 4
	o.FlushTimeout = 5 * time.Second
	o.StableFor = 100 * time.Millisecond
	o.PollInterval = 10 * time.Millisecond
	o.StopGrace = 300 * time.Millisecond
	return o
}

func gen(i, words, maxNew int) string {
	text := fmt.Sprintf("probe_%d", i) + strings.Repeat(" hello", words-1)
	return fmt.Sprintf(`POST /generate {"text":%q,"sampling_params":{"temperature":0,"max_new_tokens":%d},"stream":false}`, text, maxNew)
}

func completion(model string, i, words, maxNew int) string {
	text := fmt.Sprintf("probe_%d", i) + strings.Repeat(" hello", words-1)
	return fmt.Sprintf(`POST /v1/completions {"model":%q,"prompt":%q,"max_tokens":%d,"temperature":0,"seed":0,"ignore_eos":true,"stream":false}`, model, text, maxNew)
}

func sglangStart(dir, prefix string, steps int, byStage bool) string {
	return fmt.Sprintf(`POST /start_profile {"output_dir":%q,"num_steps":%d,"activities":["CPU","GPU"],"with_stack":true,"record_shapes":false,"profile_by_stage":%v,"merge_profiles":false,"profile_prefix":%q}`,
		dir, steps, byStage, prefix)
}

func checkRequests(t *testing.T, srv *capturetest.Server, want []string) {
	t.Helper()
	var got []string
	for _, r := range srv.Requests() {
		got = append(got, r.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// checkFiles asserts a stage's files: their base names match the
// patterns in order, and each is a complete gzip stream (or, for plain
// JSON, what the server wrote).
func checkFiles(t *testing.T, sr capture.StageResult, patterns ...string) {
	t.Helper()
	if sr.Err != nil {
		t.Fatalf("stage %s: %v", sr.Stage, sr.Err)
	}
	if len(sr.Files) != len(patterns) {
		t.Fatalf("stage %s: files %v, want %d", sr.Stage, sr.Files, len(patterns))
	}
	for i, f := range sr.Files {
		if filepath.Dir(f) != sr.Dir {
			t.Errorf("stage %s: %s is not in %s", sr.Stage, f, sr.Dir)
		}
		if ok, _ := filepath.Match(patterns[i], filepath.Base(f)); !ok {
			t.Errorf("stage %s: file %s does not match %s", sr.Stage, filepath.Base(f), patterns[i])
		}
		if strings.HasSuffix(f, ".gz") && !gzipComplete(t, f) {
			t.Errorf("stage %s: %s is not a complete gzip stream", sr.Stage, f)
		}
	}
}

func gzipComplete(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return false
	}
	var out bytes.Buffer
	_, err = out.ReadFrom(zr)
	return err == nil
}

func TestCaptureSGLangBothStages(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	// Rank 1 finishes well after rank 0 is stable: the wait must hold out
	// for it (the server says tp_size 2).
	srv := capturetest.New(t, capturetest.Config{Framework: "sglang", Ranks: 2,
		FlushDelay: 50 * time.Millisecond, RankStagger: 250 * time.Millisecond})
	opt := fast(srv.URL, out)
	var phases []string
	opt.Progress = func(p capture.Progress) {
		if k := p.Stage + " " + p.Phase; len(phases) == 0 || phases[len(phases)-1] != k {
			phases = append(phases, k)
		}
	}
	res, err := capture.Capture(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Framework != "sglang" || res.Model != "meta-llama/Llama-3.1-8B-Instruct" || res.Run != "run1" {
		t.Errorf("result %+v", res)
	}
	pre, dec := filepath.Join(out, "run1", "prefill"), filepath.Join(out, "run1", "decode")
	checkRequests(t, srv, []string{
		"GET /server_info",
		gen(0, 3, 1), gen(1, 3, 1),
		sglangStart(pre, "tracehouse-prefill", 3, false),
		gen(2, 3, 1), gen(3, 3, 1),
		// Two one-step requests do not reach num_steps 3: SGLang does not
		// stop by itself, so the capture does, once no trace appears.
		"POST /stop_profile",
		gen(4, 1, 4), gen(5, 1, 4),
		sglangStart(dec, "tracehouse-decode", 3, false),
		// One request of 4 steps passes num_steps: SGLang stops itself.
		gen(6, 1, 4),
	})
	if len(res.Stages) != 2 {
		t.Fatalf("stages %+v", res.Stages)
	}
	checkFiles(t, res.Stages[0], "tracehouse-prefill-*-TP-0.trace.json.gz", "tracehouse-prefill-*-TP-1.trace.json.gz")
	checkFiles(t, res.Stages[1], "tracehouse-decode-*-TP-0.trace.json.gz", "tracehouse-decode-*-TP-1.trace.json.gz")
	for _, sr := range res.Stages {
		if sr.ServerArgs != filepath.Join(sr.Dir, "server_args.json") {
			t.Errorf("server args %q", sr.ServerArgs)
		}
		b, err := os.ReadFile(sr.ServerArgs)
		if err != nil || !bytes.Contains(b, []byte(`"model_path":"meta-llama/Llama-3.1-8B-Instruct"`)) {
			t.Errorf("server_args.json: %s %v", b, err)
		}
	}
	wantTags := map[string]string{"workload": "both", "warmup_steps": "2", "num_steps": "2", "capture_url": srv.URL,
		"model": "meta-llama/Llama-3.1-8B-Instruct", "prefill_input_len": "3", "prefill_output_len": "1", "prefill_requests": "2",
		"decode_input_len": "1", "decode_output_len": "4", "decode_requests": "1"}
	if fmt.Sprint(res.Tags) != fmt.Sprint(wantTags) {
		t.Errorf("tags %v\nwant %v", res.Tags, wantTags)
	}
	wantPhases := []string{" detect", "prefill warmup", "prefill profile", "prefill stop", "prefill flush", "prefill done",
		"decode warmup", "decode profile", "decode stop", "decode flush", "decode done"}
	if !slices.Equal(phases, wantPhases) {
		t.Errorf("phases %q\nwant %q", phases, wantPhases)
	}
	if srv.Profiling() {
		t.Error("profiler left running")
	}
}

// TestSGLangGrowingFile: a background writer that pauses mid-file (size
// stable for longer than StableFor, gzip stream unfinished) is waited for.
func TestCaptureSGLangGrowingFile(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	srv := capturetest.New(t, capturetest.Config{Framework: "sglang", OldInfo: true,
		FlushDelay: 50 * time.Millisecond, GrowFor: 500 * time.Millisecond})
	opt := fast(srv.URL, out)
	opt.Workload = capture.Decode
	res, err := capture.Capture(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	// Checked at once: a capture that returned on the half-written file
	// would leave it incomplete here for hundreds of milliseconds.
	checkFiles(t, res.Stages[0], "tracehouse-decode-*-TP-0.trace.json.gz")
	got := srv.Requests()
	if got[0].Path != "/server_info" || got[1].Path != "/get_server_info" {
		t.Errorf("info routes: %v", got[:2])
	}
}

// TestSGLangOldFilesIgnored: a second capture into the same run directory
// takes only its own files, never the first capture's.
func TestCaptureSGLangOldFilesIgnored(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	srv := capturetest.New(t, capturetest.Config{Framework: "sglang", FlushDelay: 50 * time.Millisecond})
	opt := fast(srv.URL, out)
	opt.Workload = capture.Decode
	first, err := capture.Capture(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	// The second flush is slow: the old file sits there, complete and
	// stable, the whole time.
	srv2 := capturetest.New(t, capturetest.Config{Framework: "sglang", FlushDelay: 400 * time.Millisecond})
	opt.URL = srv2.URL
	second, err := capture.Capture(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	a, b := first.Stages[0].Files, second.Stages[0].Files
	if len(a) != 1 || len(b) != 1 || a[0] == b[0] {
		t.Fatalf("first %v, second %v", a, b)
	}
	if w := srv2.Written(); len(w) != 1 || w[0] != b[0] {
		t.Errorf("second capture took %v, server wrote %v", b, w)
	}
}

func TestCaptureSGLangProfileByStage(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	srv := capturetest.New(t, capturetest.Config{Framework: "sglang", Ranks: 2, FlushDelay: 30 * time.Millisecond})
	opt := fast(srv.URL, out)
	opt.ProfileByStage = true
	res, err := capture.Capture(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(out, "run1", "by-stage")
	checkRequests(t, srv, []string{
		"GET /server_info",
		gen(0, 3, 1), gen(1, 3, 1), gen(2, 1, 4), gen(3, 1, 4),
		sglangStart(dir, "tracehouse", 3, true),
		gen(4, 3, 1), gen(5, 3, 1), gen(6, 1, 4),
	})
	checkFiles(t, res.Stages[0], "tracehouse-*-TP-0-DECODE.trace.json.gz", "tracehouse-*-TP-0-EXTEND.trace.json.gz",
		"tracehouse-*-TP-1-DECODE.trace.json.gz", "tracehouse-*-TP-1-EXTEND.trace.json.gz")
}

func TestCaptureSGLangLegacy(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	srv := capturetest.New(t, capturetest.Config{Framework: "sglang"})
	opt := fast(srv.URL, out)
	opt.Framework = "sglang"
	opt.Workload, opt.Prompt, opt.MaxNewTokens = capture.Legacy, "Tell me a <story>", 3
	opt.WarmupSteps = 1
	res, err := capture.Capture(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(out, "run1", "mixed")
	checkRequests(t, srv, []string{
		"GET /server_info",
		`POST /generate {"text":"probe_0 Tell me a <story>","sampling_params":{"temperature":0,"max_new_tokens":3},"stream":false}`,
		sglangStart(dir, "tracehouse-mixed", 3, false),
		`POST /generate {"text":"probe_1 Tell me a <story>","sampling_params":{"temperature":0,"max_new_tokens":3},"stream":false}`,
	})
	checkFiles(t, res.Stages[0], "tracehouse-mixed-*-TP-0.trace.json.gz")
	if res.Tags["prompt_words"] != "4" || res.Tags["max_new_tokens"] != "3" || res.Tags["requests"] != "1" {
		t.Errorf("tags %v", res.Tags)
	}
}

// TestVLLM: vLLM writes into its own directory, which holds an older
// capture's file; the new files (one per rank, written after
// /stop_profile returned) are copied into each stage's directory.
func TestCaptureVLLM(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	old := filepath.Join(out, "dp0_pp0_tp0_dcp0_ep0_rank0.1700000000000000000.pt.trace.json.gz")
	b, err := capturetest.SynthTrace("vllm", 0, "", false, 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, b, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := capturetest.New(t, capturetest.Config{Framework: "vllm", Dir: out, Ranks: 2, Model: "Qwen/Qwen3-8B",
		FlushDelay: 100 * time.Millisecond, RankStagger: 200 * time.Millisecond})
	opt := fast(srv.URL, out)
	opt.Ranks = 2 // vLLM does not say
	res, err := capture.Capture(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	m := "Qwen/Qwen3-8B"
	checkRequests(t, srv, []string{
		"GET /server_info", "GET /get_server_info", "GET /readiness", "GET /v1/models",
		completion(m, 0, 3, 1), completion(m, 1, 3, 1),
		"POST /start_profile",
		completion(m, 2, 3, 1), completion(m, 3, 3, 1),
		"POST /stop_profile",
		completion(m, 4, 1, 4), completion(m, 5, 1, 4),
		"POST /start_profile",
		completion(m, 6, 1, 4),
		"POST /stop_profile",
	})
	checkFiles(t, res.Stages[0], "dp0_pp0_tp0_dcp0_ep0_rank0.*.pt.trace.json.gz", "dp0_pp0_tp1_dcp0_ep0_rank1.*.pt.trace.json.gz")
	checkFiles(t, res.Stages[1], "dp0_pp0_tp0_dcp0_ep0_rank0.*.pt.trace.json.gz", "dp0_pp0_tp1_dcp0_ep0_rank1.*.pt.trace.json.gz")
	written := srv.Written()
	for i, sr := range res.Stages {
		for j, f := range sr.Files {
			orig := filepath.Join(out, filepath.Base(f))
			if orig == old || !slices.Contains(written, orig) {
				t.Errorf("stage %s took %s, not a file of this capture", sr.Stage, orig)
			}
			a, _ := os.ReadFile(orig)
			c, _ := os.ReadFile(f)
			if len(a) == 0 || !bytes.Equal(a, c) {
				t.Errorf("copy %s differs from %s", f, orig)
			}
			if i == 1 && slices.Contains(res.Stages[0].Files, filepath.Join(res.Stages[0].Dir, filepath.Base(f))) {
				t.Errorf("decode stage took prefill's file %s (%d)", f, j)
			}
		}
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("old file: %v", err)
	}
	if res.Stages[0].ServerArgs != "" {
		t.Errorf("vLLM exposes no server args, saved %s", res.Stages[0].ServerArgs)
	}
}

// TestTRTLLM: TensorRT-LLM rewrites one fixed file; an older copy of it is
// not the new trace, the rewritten one is.
func TestCaptureTRTLLM(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	old := []byte(`{"traceEvents": []}` + "\n")
	if err := os.WriteFile(filepath.Join(out, "trace.json"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := capturetest.New(t, capturetest.Config{Framework: "trtllm", Dir: out, FlushDelay: 150 * time.Millisecond})
	opt := fast(srv.URL, out)
	opt.Workload = capture.Prefill
	res, err := capture.Capture(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	m := "meta-llama/Llama-3.1-8B-Instruct"
	checkRequests(t, srv, []string{
		"GET /server_info", "GET /get_server_info", "GET /readiness", "GET /v1/models",
		completion(m, 0, 3, 1), completion(m, 1, 3, 1),
		"POST /start_profile",
		completion(m, 2, 3, 1), completion(m, 3, 3, 1),
		"POST /stop_profile",
	})
	checkFiles(t, res.Stages[0], "trace.json")
	got, _ := os.ReadFile(res.Stages[0].Files[0])
	if bytes.Equal(got, old) || !bytes.HasPrefix(got, []byte("{")) {
		t.Errorf("took the old trace.json (%d bytes)", len(got))
	}
}

func TestCaptureTokenSpeed(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	srv := capturetest.New(t, capturetest.Config{Framework: "tokenspeed", Model: "deepseek-ai/DeepSeek-V3", FlushDelay: 50 * time.Millisecond})
	opt := fast(srv.URL, out)
	res, err := capture.Capture(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	m := "deepseek-ai/DeepSeek-V3"
	start := func(stage string) string {
		return fmt.Sprintf(`POST /start_profile {"output_dir":%q,"activities":["CPU","GPU"],"with_stack":true,"record_shapes":false,"profile_id":"tracehouse-%s","num_steps":2}`,
			filepath.Join(out, "run1", stage), stage)
	}
	// TokenSpeed stops after num_steps by itself in both stages.
	checkRequests(t, srv, []string{
		"GET /server_info", "GET /v1/models",
		completion(m, 0, 3, 1), completion(m, 1, 3, 1),
		start("prefill"),
		completion(m, 2, 3, 1), completion(m, 3, 3, 1),
		completion(m, 4, 1, 4), completion(m, 5, 1, 4),
		start("decode"),
		completion(m, 6, 1, 4),
	})
	if res.Framework != "tokenspeed" {
		t.Errorf("framework %s", res.Framework)
	}
	checkFiles(t, res.Stages[0], "tracehouse-prefill-TP-0.trace.json.gz")
	checkFiles(t, res.Stages[1], "tracehouse-decode-TP-0.trace.json.gz")
}

// TestTokenSpeedReadiness: without /server_info, /readiness tells
// TokenSpeed.
func TestCaptureTokenSpeedReadiness(t *testing.T) {
	t.Parallel()
	out := t.TempDir() // before the server, whose cleanup (run first) waits for its writers
	srv := capturetest.New(t, capturetest.Config{Framework: "tokenspeed", NoInfo: true})
	s, err := capture.Detect(context.Background(), fast(srv.URL, out))
	if err != nil || s.Framework != "tokenspeed" || s.Evidence != "/readiness answers" || s.ModelID == "" {
		t.Fatalf("%+v %v", s, err)
	}
}

func TestCaptureDetectUnknown(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	_, err := capture.Capture(context.Background(), fast(srv.URL, t.TempDir()))
	var u *capture.UnknownFrameworkError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "could not tell which framework serves "+srv.URL) ||
		!strings.HasSuffix(err.Error(), "): name it with --framework (sglang, vllm, trtllm, tokenspeed)") {
		t.Fatalf("%v", err)
	}
	oneLine(t, err)
}

func oneLine(t *testing.T, err error) {
	t.Helper()
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("want a one-line error, got %q", err)
	}
}

// TestFlushTimeout: a stage whose files do not arrive fails alone, naming
// the directory and what is missing; the next stage completes. The margins
// are wide because a loaded host delays both sides: the decode files need
// StableFor after they appear, within the timeout, and the prefill files
// must still be missing when the capture's clock, started after its stop
// request returns, runs out.
func TestCaptureFlushTimeout(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	srv := capturetest.New(t, capturetest.Config{Framework: "sglang",
		FlushDelays: []time.Duration{5 * time.Second, 20 * time.Millisecond}})
	opt := fast(srv.URL, out)
	opt.FlushTimeout = 1500 * time.Millisecond
	res, err := capture.Capture(context.Background(), opt)
	var te *capture.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err %v", err)
	}
	oneLine(t, err)
	pre := filepath.Join(out, "run1", "prefill")
	want := "prefill: traces not complete in " + pre + " after 1.5s: no new trace file appeared; missing: TP-0; nothing of this stage is ingested"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q\nwant prefix %q", err, want)
	}
	if len(res.Stages) != 2 || res.Stages[0].Err == nil || len(res.Stages[0].Files) != 0 {
		t.Fatalf("prefill stage %+v", res.Stages)
	}
	checkFiles(t, res.Stages[1], "tracehouse-decode-*-TP-0.trace.json.gz")
	if got := res.Files(); len(got) != 1 {
		t.Errorf("files %v", got)
	}
}

// TestMissingRank: the server says TP 2 but only rank 0 writes.
func TestCaptureMissingRank(t *testing.T) {
	t.Parallel()
	out := t.TempDir() // before the server, whose cleanup (run first) waits for its writers
	srv := capturetest.New(t, capturetest.Config{Framework: "sglang", Info: map[string]any{
		"model_path": "m", "tp_size": 2, "schedule_policy": "fcfs"}})
	opt := fast(srv.URL, out)
	opt.Workload, opt.FlushTimeout = capture.Decode, 300*time.Millisecond
	_, err := capture.Capture(context.Background(), opt)
	if err == nil || !strings.Contains(err.Error(), "found tracehouse-decode-") || !strings.Contains(err.Error(), "missing: TP-1;") {
		t.Fatalf("err %v", err)
	}
}

// TestStopOnError: a failing probe stops the armed profiler and reports
// the URL, status and body on one line.
func TestCaptureStopOnError(t *testing.T) {
	t.Parallel()
	out := t.TempDir() // before the server, whose cleanup (run first) waits for its writers
	srv := capturetest.New(t, capturetest.Config{Framework: "sglang",
		Fail: map[string]capturetest.Failure{"/generate": {After: 3, Status: 500, Body: "CUDA error:\nout of memory"}}})
	opt := fast(srv.URL, out)
	_, err := capture.Capture(context.Background(), opt)
	var h *capture.HTTPError
	if !errors.As(err, &h) || h.Status != 500 {
		t.Fatalf("err %v", err)
	}
	oneLine(t, err)
	want := "prefill: POST " + srv.URL + "/generate: 500 Internal Server Error: CUDA error: out of memory"
	if err.Error() != want {
		t.Errorf("error %q\nwant %q", err, want)
	}
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1]; last.Path != "/stop_profile" || srv.Profiling() {
		t.Errorf("last request %v, profiling %v", last, srv.Profiling())
	}
}

// TestStopOnInterrupt: a cancel while probing stops the profiler.
func TestCaptureStopOnInterrupt(t *testing.T) {
	t.Parallel()
	for _, fw := range []string{"sglang", "vllm"} {
		t.Run(fw, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			armed := false
			out := t.TempDir()
			srv := capturetest.New(t, capturetest.Config{Framework: fw, Dir: out, OnRequest: func(r capturetest.Request) {
				switch r.Path {
				case "/start_profile":
					armed = true
				case "/generate", "/v1/completions":
					if armed {
						cancel()
					}
				}
			}})
			_, err := capture.Capture(ctx, fast(srv.URL, out))
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted, profiler stopped") {
				t.Fatalf("err %v", err)
			}
			reqs := srv.Requests()
			if last := reqs[len(reqs)-1]; last.Path != "/stop_profile" || srv.Profiling() {
				t.Errorf("last request %v, profiling %v", last, srv.Profiling())
			}
		})
	}
}

// TestInterruptBeforeArming: nothing to stop.
func TestCaptureInterruptBeforeArming(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	out := t.TempDir() // before the server, whose cleanup (run first) waits for its writers
	srv := capturetest.New(t, capturetest.Config{Framework: "sglang", OnRequest: func(r capturetest.Request) {
		if r.Path == "/generate" {
			cancel()
		}
	}})
	_, err := capture.Capture(ctx, fast(srv.URL, out))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	for _, r := range srv.Requests() {
		if strings.Contains(r.Path, "profile") {
			t.Errorf("unexpected %v", r)
		}
	}
}

func TestCaptureConnectionRefused(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := capture.Capture(context.Background(), fast(url, t.TempDir()))
	var c *capture.ConnError
	if !errors.As(err, &c) {
		t.Fatalf("err %v", err)
	}
	oneLine(t, err)
	want := "GET " + url + "/server_info: connection refused (is the server running and listening there?)"
	if err.Error() != want {
		t.Errorf("error %q\nwant %q", err, want)
	}
}

func TestCaptureHTTPErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		cfg  capturetest.Config
		want string
	}{
		{"start fails", capturetest.Config{Framework: "sglang",
			Fail: map[string]capturetest.Failure{"/start_profile": {Status: 503, Body: "scheduler busy"}}},
			"prefill: POST URL/start_profile: 503 Service Unavailable: scheduler busy"},
		{"already running", capturetest.Config{Framework: "sglang",
			Fail: map[string]capturetest.Failure{"/start_profile": {Status: 400, Body: "Profiling is already in progress. Call /stop_profile first."}}},
			"prefill: POST URL/start_profile: 400 Bad Request: Profiling is already in progress. Call /stop_profile first. (a profiler is already running on the server: wait for it, or POST /stop_profile)"},
		{"error body", capturetest.Config{Framework: "vllm",
			Fail: map[string]capturetest.Failure{"/v1/completions": {Status: 200, Body: `{"object": "error", "message": "model not loaded"}`}}},
			`prefill: POST URL/v1/completions: 200 OK with an error body: {"object": "error", "message": "model not loaded"}`},
		{"vllm without profiler", capturetest.Config{Framework: "vllm", NoProfiler: true},
			`prefill: POST URL/start_profile: 404 Not Found: {"detail":"Not Found"} (the vLLM server has no profiler route: start vLLM with --profiler-config '{"profiler":"torch","torch_profiler_dir":"DIR"}' (older versions: VLLM_TORCH_PROFILER_DIR=DIR), DIR being the output directory)`},
		{"trtllm without profiler", capturetest.Config{Framework: "trtllm", NoProfiler: true},
			"prefill: POST URL/start_profile: 404 Not Found: {\"detail\":\"Not Found\"} (the TensorRT-LLM server has no profiler route: this trtllm-serve cannot be driven live; run it with TLLM_TORCH_PROFILE_TRACE=FILE and TLLM_PROFILE_START_STOP=A-B, send requests, then ingest FILE with 'tracehouse ingest')"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			c.cfg.Dir = out
			srv := capturetest.New(t, c.cfg)
			_, err := capture.Capture(context.Background(), fast(srv.URL, out))
			oneLine(t, err)
			if want := strings.ReplaceAll(c.want, "URL", srv.URL); err == nil || err.Error() != want {
				t.Errorf("error %q\nwant  %q", err, want)
			}
			if c.cfg.NoProfiler && !errors.Is(err, capture.ErrNoProfiler) {
				t.Errorf("not ErrNoProfiler: %v", err)
			}
			reqs := srv.Requests()
			if c.name != "error body" && reqs[len(reqs)-1].Path != "/start_profile" {
				t.Errorf("a failed start needs no stop; last request %v", reqs[len(reqs)-1])
			}
			if srv.Profiling() {
				t.Error("profiler left running")
			}
		})
	}
}

func TestCapturePairLabels(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	m := capturetest.New(t, capturetest.Config{Framework: "sglang"})
	f := capturetest.New(t, capturetest.Config{Framework: "sglang", Graph: true})
	mo, fo := fast(m.URL, out), fast(f.URL, out)
	mo.Run, fo.Run = "", ""
	mo.Workload, fo.Workload = capture.Decode, capture.Decode
	res, err := capture.Pair(context.Background(), mo, fo)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Role != "mapping" || res[1].Role != "formal" {
		t.Fatalf("%+v", res)
	}
	a, b := res[0].Run, res[1].Run
	if !strings.HasPrefix(a, "Llama-3.1-8B-Instruct-") || !strings.HasSuffix(a, "-mapping") ||
		strings.TrimSuffix(a, "-mapping")+"-formal" != b {
		t.Errorf("labels %s, %s", a, b)
	}
}

func TestCaptureDefaultLabel(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for model, want := range map[string]string{
		"meta-llama/Llama-3.1-8B-Instruct": "Llama-3.1-8B-Instruct-20260304-050607",
		"/models/DeepSeek V3/":             "DeepSeek-V3-20260304-050607",
		"":                                 "capture-20260304-050607",
	} {
		if got := capture.DefaultLabel(model, now, ""); got != want {
			t.Errorf("%q: %s, want %s", model, got, want)
		}
	}
}

func TestCaptureValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		edit func(*capture.Options)
		want string
	}{
		{func(o *capture.Options) { o.URL = "" }, "url: required (the server's base URL, e.g. http://localhost:30000)"},
		{func(o *capture.Options) { o.URL = "localhost:30000" }, `url "localhost:30000": want http://HOST:PORT`},
		{func(o *capture.Options) { o.OutputDir = "" }, "output-dir: required (a directory both the server and tracehouse can see)"},
		{func(o *capture.Options) { o.Framework = "tgi" }, `framework "tgi": want one of sglang, vllm, trtllm, tokenspeed`},
		{func(o *capture.Options) { o.Workload = "mixed" }, `workload "mixed": want one of both, prefill, decode, legacy`},
		{func(o *capture.Options) { o.NumSteps = 0 }, "num-steps 0: want 1 or more"},
		{func(o *capture.Options) { o.WarmupSteps = -1 }, "warmup-steps -1: want 0 or more"},
		{func(o *capture.Options) { o.DecodeOutputLen = 0 }, "decode-output-len 0: want 1 or more"},
		{func(o *capture.Options) { o.Workload = capture.Legacy }, "prompt: required by the legacy workload"},
		{func(o *capture.Options) { o.Prompt = "hi" }, "prompt: only the legacy workload sends a prompt (add workload legacy)"},
		{func(o *capture.Options) { o.Framework, o.ProfileByStage = "vllm", true }, "profile-by-stage: only SGLang and TokenSpeed split stages themselves"},
		{func(o *capture.Options) { o.FlushTimeout = 0 }, "flush-timeout 0s: want a positive duration, e.g. 300s"},
		{func(o *capture.Options) { o.Run = "a/b" }, `run "a/b": want a label without slashes (it names a directory)`},
	} {
		o := fast("http://localhost:30000", "out")
		c.edit(&o)
		err := o.Validate()
		var oe *capture.OptionError
		if !errors.As(err, &oe) || err.Error() != c.want {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	o := fast("http://localhost:30000", "out")
	if err := o.Validate(); err != nil {
		t.Errorf("valid options: %v", err)
	}
}

// TestInterruptWhileFlushing: the profiler is already stopped; a cancel
// while waiting for its files sends nothing more.
func TestCaptureInterruptWhileFlushing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := t.TempDir()
	srv := capturetest.New(t, capturetest.Config{Framework: "vllm", Dir: out, FlushDelay: 300 * time.Millisecond,
		OnRequest: func(r capturetest.Request) {
			if r.Path == "/stop_profile" {
				time.AfterFunc(50*time.Millisecond, cancel)
			}
		}})
	_, err := capture.Capture(ctx, fast(srv.URL, out))
	if !errors.Is(err, context.Canceled) || err.Error() != "prefill: interrupted: context canceled" {
		t.Fatalf("err %v", err)
	}
	n := 0
	for _, r := range srv.Requests() {
		if r.Path == "/stop_profile" {
			n++
		}
	}
	if n != 1 || srv.Profiling() {
		t.Errorf("%d stops, profiling %v", n, srv.Profiling())
	}
}

// TestCaptureStopWhenStartHangs: a cancel while /start_profile is pending
// (the server armed the profiler, its answer has not come) still stops
// the profiler.
func TestCaptureStopWhenStartHangs(t *testing.T) {
	t.Parallel()
	for _, fw := range []string{"sglang", "vllm"} {
		t.Run(fw, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := t.TempDir()
			var srv *capturetest.Server
			srv = capturetest.New(t, capturetest.Config{Framework: fw, Dir: out,
				Hang: map[string]time.Duration{"/start_profile": time.Minute},
				OnRequest: func(r capturetest.Request) {
					if r.Path == "/start_profile" {
						go func() {
							for !srv.Profiling() {
								time.Sleep(time.Millisecond)
							}
							cancel()
						}()
					}
				}})
			_, err := capture.Capture(ctx, fast(srv.URL, out))
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted, profiler stopped") {
				t.Fatalf("err %v", err)
			}
			reqs := srv.Requests()
			if last := reqs[len(reqs)-1]; last.Path != "/stop_profile" || srv.Profiling() {
				t.Errorf("last request %v, profiling %v", last, srv.Profiling())
			}
		})
	}
}

// TestCaptureRequestTimeout: a probe that hangs past RequestTimeout fails
// the capture, naming the request, and the profiler is stopped.
func TestCaptureRequestTimeout(t *testing.T) {
	t.Parallel()
	if d := capture.Defaults().RequestTimeout; d != 10*time.Minute {
		t.Errorf("default request timeout %v", d)
	}
	out := t.TempDir() // before the server, whose cleanup (run first) waits for its writers
	srv := capturetest.New(t, capturetest.Config{Framework: "sglang",
		Hang: map[string]time.Duration{"/generate": time.Minute}})
	opt := fast(srv.URL, out)
	opt.WarmupSteps = 0                  // the first /generate is a probe, profiler armed
	opt.RequestTimeout = 2 * time.Second // the other requests answer at once, even on a loaded machine
	_, err := capture.Capture(context.Background(), opt)
	want := "prefill: POST " + srv.URL + "/generate: no answer within 2s"
	if err == nil || err.Error() != want {
		t.Fatalf("err %v\nwant %s", err, want)
	}
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1]; last.Path != "/stop_profile" || srv.Profiling() {
		t.Errorf("last request %v, profiling %v", last, srv.Profiling())
	}
	opt.RequestTimeout = -time.Second
	if err := opt.Validate(); err == nil || err.Error() != "request-timeout -1s: want a positive duration, e.g. 10m" {
		t.Errorf("validate: %v", err)
	}
}

// TestCaptureLargeServerInfo: a /server_info body beyond MaxResponse is
// not read whole (nor kept): detection goes on without it, and the
// capture says the server's arguments are not recorded.
func TestCaptureLargeServerInfo(t *testing.T) {
	t.Parallel()
	out := t.TempDir() // before the server, whose cleanup (run first) waits for its writers
	srv := capturetest.New(t, capturetest.Config{Framework: "sglang", InfoBytes: 3 * capture.MaxResponse})
	opt := fast(srv.URL, out)
	opt.Workload = capture.Prefill
	res, err := capture.Capture(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Framework != "sglang" || res.Server.Info != nil || res.Stages[0].ServerArgs != "" {
		t.Errorf("framework %s, info %d bytes, server args %q", res.Framework, len(res.Server.Info), res.Stages[0].ServerArgs)
	}
	if _, err := os.Stat(filepath.Join(res.Stages[0].Dir, "server_args.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("server_args.json: %v", err)
	}
	want := "GET " + srv.URL + "/server_info: answer larger than 1 MiB, not read: the server's arguments are not recorded"
	if !slices.Equal(res.Server.Notes, []string{want}) {
		t.Errorf("notes %q\nwant %q", res.Server.Notes, want)
	}
}
