// Package capturetest runs fake SGLang, vLLM, TensorRT-LLM and TokenSpeed
// servers in the test process, as the README's capture sections describe them: their detection
// routes, request and profiler payloads, trace file naming, a profiler
// that SGLang and TokenSpeed stop after num_steps by themselves, and trace
// files written on a background goroutine after a delay, growing, rank by
// rank, after /stop_profile has returned.
package capturetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tracehouse/tracehouse/synth"
	"github.com/tracehouse/tracehouse/vocab"
)

// Config describes a fake server.
type Config struct {
	// Framework is sglang, vllm, trtllm or tokenspeed.
	Framework string
	// Dir is where vLLM and TensorRT-LLM write (their own profiler
	// directory); SGLang and TokenSpeed write where /start_profile says.
	Dir string
	// Ranks writing one file each (default 1).
	Ranks int
	// Model served (default meta-llama/Llama-3.1-8B-Instruct).
	Model string
	// Graph says CUDA graphs are on (a formal server); off by default.
	Graph bool
	// Info replaces the /server_info answer of SGLang and TokenSpeed.
	Info map[string]any
	// NoInfo answers 404 on /server_info; OldInfo serves it only as the
	// older /get_server_info.
	NoInfo, OldInfo bool
	// NoProfiler answers 404 on /start_profile and /stop_profile.
	NoProfiler bool
	// FlushDelay passes between the profiler stopping and the first byte
	// written; rank r starts r*RankStagger later; a file is written in
	// two halves GrowFor apart.
	FlushDelay  time.Duration
	RankStagger time.Duration
	// FlushDelays, when long enough, replaces FlushDelay for the n-th
	// stop of the profiler (0-based).
	FlushDelays []time.Duration
	GrowFor     time.Duration
	// Fail makes requests to a path fail.
	Fail map[string]Failure
	// Hang holds the answer to a path this long after the server has done
	// what it asks (a /start_profile arms the profiler, then hangs), or
	// until the client goes away.
	Hang map[string]time.Duration
	// InfoBytes, when positive, makes /server_info stream this many bytes
	// of a JSON object (a body too large to keep).
	InfoBytes int
	// OnRequest, when set, sees every request once it is recorded, before
	// it is answered.
	OnRequest func(Request)
	// Trace returns the bytes of rank's file of a stage (prefill, decode,
	// or "" for both); the default generates a small synthetic trace
	// (synth), different for every file.
	Trace func(rank int, stage string) ([]byte, error)
}

// Failure fails the calls to a path after the first After of them.
type Failure struct {
	After  int
	Status int
	Body   string
}

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	Body   string
}

func (r Request) String() string {
	if r.Body == "" {
		return r.Method + " " + r.Path
	}
	return r.Method + " " + r.Path + " " + r.Body
}

// Server is a running fake server.
type Server struct {
	*httptest.Server
	cfg Config
	t   testing.TB

	mu        sync.Mutex
	reqs      []Request
	calls     map[string]int
	profiling bool
	start     startBody
	steps     int // forward steps while profiling
	extend    int
	decode    int
	seq       int
	id        int64 // file ids start here, distinct across servers
	written   []string
	writers   sync.WaitGroup
	// over closes when the test ends: a writer still waiting out its
	// delay then writes nothing, as a server killed mid-flush would.
	over chan struct{}
}

// startBody is the union of the /start_profile bodies.
type startBody struct {
	OutputDir      string `json:"output_dir"`
	NumSteps       int    `json:"num_steps"`
	ProfileByStage bool   `json:"profile_by_stage"`
	ProfilePrefix  string `json:"profile_prefix"`
	ProfileID      string `json:"profile_id"`
}

// salt keeps the files of every fake server in a process distinct.
var salt atomic.Int64

// New starts a fake server, closed when the test ends, after the writers
// already writing finish (one still waiting out its delay writes nothing). Make the directories it writes into before calling New:
// cleanups run last-registered first, so a directory made later is
// removed while a writer may still be filling it.
func New(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Ranks <= 0 {
		cfg.Ranks = 1
	}
	if cfg.Model == "" {
		cfg.Model = "meta-llama/Llama-3.1-8B-Instruct"
	}
	if cfg.Trace == nil {
		base := salt.Add(1) * 100000
		var n atomic.Int64
		fw := cfg.Framework
		graph := cfg.Graph
		cfg.Trace = func(rank int, stage string) ([]byte, error) {
			return SynthTrace(fw, rank, stage, graph, base+n.Add(1))
		}
	}
	s := &Server{cfg: cfg, t: t, calls: map[string]int{}, id: salt.Add(1) * 1000, over: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		close(s.over)
		s.Server.Close()
		s.writers.Wait()
	})
	return s
}

// SynthTrace returns a small synthetic trace of one rank in framework's
// flavour (gzip except for trtllm), unique for each seed.
func SynthTrace(framework string, rank int, stage string, graph bool, seed int64) ([]byte, error) {
	dir, err := os.MkdirTemp("", "capturetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	m, err := synth.Generate(synth.Options{Framework: framework, Dir: dir, Run: "r", Ranks: rank + 1,
		Steps: 2, Layers: 2, Gzip: true, Stage: stage, Graph: graph, Seed: seed})
	if err != nil {
		return nil, err
	}
	for _, f := range m.Files {
		if f.Rank == rank {
			return os.ReadFile(f.Path)
		}
	}
	return nil, fmt.Errorf("capturetest: synth wrote no file for rank %d", rank)
}

// Requests are the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Profiling says whether the profiler is armed.
func (s *Server) Profiling() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.profiling
}

// Written waits for the background writers and lists the files written.
func (s *Server) Written() []string {
	s.writers.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.written...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Body: string(body)}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.calls[req.Path]++
	n := s.calls[req.Path]
	s.mu.Unlock()
	if s.cfg.OnRequest != nil {
		s.cfg.OnRequest(req)
	}
	if f, ok := s.cfg.Fail[req.Path]; ok && n > f.After {
		http.Error(w, f.Body, f.Status)
		return
	}
	if d := s.cfg.Hang[req.Path]; d > 0 {
		// Answer only after the hang, or not at all when the client left.
		hw := &hangWriter{ResponseWriter: w}
		defer func() {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				hw.flush()
			case <-r.Context().Done():
			}
		}()
		w = hw
	}
	fw := s.cfg.Framework
	sgl := fw == vocab.SGLang || fw == vocab.TokenSpeed
	switch {
	case r.Method == "GET" && req.Path == "/server_info" && sgl && s.cfg.InfoBytes > 0:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"model_path": "`)
		chunk := strings.Repeat("x", 4096)
		for n := 0; n < s.cfg.InfoBytes; n += len(chunk) {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
		io.WriteString(w, `"}`)
	case r.Method == "GET" && req.Path == "/server_info" && sgl && !s.cfg.NoInfo && !s.cfg.OldInfo,
		r.Method == "GET" && req.Path == "/get_server_info" && sgl && s.cfg.OldInfo:
		writeJSON(w, 200, s.info())
	case r.Method == "GET" && req.Path == "/readiness" && fw == vocab.TokenSpeed:
		writeJSON(w, 200, map[string]any{"status": "ready"})
	case r.Method == "GET" && req.Path == "/v1/models":
		owner := map[string]string{vocab.SGLang: "sglang", vocab.VLLM: "vllm", vocab.TRTLLM: "tensorrt_llm", vocab.TokenSpeed: "tokenspeed"}[fw]
		writeJSON(w, 200, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": s.cfg.Model, "object": "model", "created": 1751650000, "owned_by": owner}}})
	case r.Method == "POST" && req.Path == "/generate" && fw == vocab.SGLang:
		var g struct {
			SamplingParams struct {
				MaxNewTokens int `json:"max_new_tokens"`
			} `json:"sampling_params"`
		}
		if json.Unmarshal(body, &g) != nil || g.SamplingParams.MaxNewTokens < 1 {
			writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "bad request"}})
			return
		}
		s.forward(g.SamplingParams.MaxNewTokens)
		writeJSON(w, 200, map[string]any{"text": " hello", "meta_info": map[string]any{"finish_reason": map[string]any{"type": "length"}}})
	case r.Method == "POST" && (req.Path == "/v1/completions" || req.Path == "/v1/chat/completions") && fw != vocab.SGLang:
		var c struct {
			Model     string `json:"model"`
			MaxTokens int    `json:"max_tokens"`
		}
		if json.Unmarshal(body, &c) != nil || c.MaxTokens < 1 || c.Model != s.cfg.Model {
			writeJSON(w, 400, map[string]any{"object": "error", "message": "bad request", "code": 400})
			return
		}
		s.forward(c.MaxTokens)
		writeJSON(w, 200, map[string]any{"object": "text_completion", "model": c.Model, "choices": []any{map[string]any{"text": " hello"}}})
	case r.Method == "POST" && req.Path == "/start_profile" && !s.cfg.NoProfiler:
		s.startProfile(w, body)
	case r.Method == "POST" && req.Path == "/stop_profile" && !s.cfg.NoProfiler:
		s.mu.Lock()
		on := s.profiling
		if on {
			s.stopLocked()
		}
		s.mu.Unlock()
		if !on && sgl {
			http.Error(w, "Profiling is not in progress. Call /start_profile first.", 400)
			return
		}
		// The files come later, from the background writers.
		io.WriteString(w, "Stop profiling. This will take some time.\n")
	default:
		writeJSON(w, 404, map[string]any{"detail": "Not Found"})
	}
}

func (s *Server) info() map[string]any {
	if s.cfg.Info != nil {
		return s.cfg.Info
	}
	m := map[string]any{
		"model_path": s.cfg.Model, "tokenizer_path": s.cfg.Model, "tp_size": s.cfg.Ranks, "dp_size": 1, "pp_size": 1,
		"mem_fraction_static": 0.85, "chunked_prefill_size": 8192, "schedule_policy": "fcfs",
		"max_running_requests": nil, "disable_cuda_graph": !s.cfg.Graph, "version": "0.4.9",
	}
	if s.cfg.Framework == vocab.TokenSpeed {
		m["runtime"], m["tokenspeed_version"] = "tokenspeed", "0.4.2"
	}
	return m
}

func (s *Server) startProfile(w http.ResponseWriter, body []byte) {
	fw := s.cfg.Framework
	var b startBody
	if fw == vocab.SGLang || fw == vocab.TokenSpeed {
		if err := json.Unmarshal(body, &b); err != nil || b.OutputDir == "" || b.NumSteps < 1 {
			http.Error(w, "bad /start_profile body", 400)
			return
		}
	} else if len(body) > 0 {
		http.Error(w, "/start_profile takes no body", 400)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.profiling {
		http.Error(w, "Profiling is already in progress. Call /stop_profile first.", 400)
		return
	}
	s.profiling, s.start, s.steps, s.extend, s.decode = true, b, 0, 0, 0
	io.WriteString(w, "Start profiling.\n")
}

// forward runs one request's steps: a prefill, then n-1 decode steps.
// SGLang and TokenSpeed stop the profiler themselves after num_steps.
func (s *Server) forward(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.profiling {
		return
	}
	s.steps += n
	s.extend++
	s.decode += n - 1
	switch fw := s.cfg.Framework; {
	case fw != vocab.SGLang && fw != vocab.TokenSpeed:
	case s.start.ProfileByStage:
		if s.decode >= s.start.NumSteps {
			s.stopLocked()
		}
	case s.steps >= s.start.NumSteps:
		s.stopLocked()
	}
}

// stopLocked disarms the profiler and starts the background writers.
func (s *Server) stopLocked() {
	s.profiling = false
	s.seq++
	seq := s.seq
	fw := s.cfg.Framework
	type file struct {
		name, stage string
	}
	var files []file
	stages := []string{""}
	if s.start.ProfileByStage {
		stages = nil
		if s.extend > 0 {
			stages = append(stages, "EXTEND")
		}
		if s.decode > 0 {
			stages = append(stages, "DECODE")
		}
	}
	for r := 0; r < s.cfg.Ranks; r++ {
		for _, st := range stages {
			suffix, stage := "", ""
			if st != "" {
				suffix = "-" + st
				stage = map[string]string{"EXTEND": "prefill", "DECODE": "decode"}[st]
			}
			var name string
			switch fw {
			case vocab.SGLang:
				id := fmt.Sprintf("%d.%07d", 1751653600+s.id+int64(seq), 1234567)
				prefix := ""
				if s.start.ProfilePrefix != "" {
					prefix = s.start.ProfilePrefix + "-"
				}
				name = filepath.Join(s.start.OutputDir, prefix+id+"-TP-"+strconv.Itoa(r)+suffix+".trace.json.gz")
				if stage == "" {
					stage = stageOf(s.start.ProfilePrefix)
				}
			case vocab.TokenSpeed:
				name = filepath.Join(s.start.OutputDir, s.start.ProfileID+"-TP-"+strconv.Itoa(r)+suffix+".trace.json.gz")
				if stage == "" {
					stage = stageOf(s.start.ProfileID)
				}
			case vocab.VLLM:
				name = filepath.Join(s.cfg.Dir, fmt.Sprintf("dp0_pp0_tp%d_dcp0_ep0_rank%d.%d.pt.trace.json.gz", r, r, 1751657210123456789+s.id+int64(seq)))
			case vocab.TRTLLM:
				name = filepath.Join(s.cfg.Dir, "trace.json")
				if r > 0 {
					name = filepath.Join(s.cfg.Dir, "trace-rank"+strconv.Itoa(r)+".json")
				}
			}
			files = append(files, file{name, stage})
		}
	}
	delay := s.cfg.FlushDelay
	if seq-1 < len(s.cfg.FlushDelays) {
		delay = s.cfg.FlushDelays[seq-1]
	}
	for i, f := range files {
		rank := i / len(stages)
		// The bytes are made now, so that only the configured delays
		// decide when the file appears.
		b, err := s.cfg.Trace(rank, f.stage)
		if err != nil {
			s.t.Errorf("capturetest: trace for %s: %v", f.name, err)
			continue
		}
		s.writers.Add(1)
		go func() {
			defer s.writers.Done()
			wait := time.NewTimer(delay + time.Duration(rank)*s.cfg.RankStagger)
			defer wait.Stop()
			select {
			case <-wait.C:
			case <-s.over:
				return
			}
			if err := s.write(f.name, b); err != nil {
				if errors.Is(err, os.ErrNotExist) {
					// The test is over and its directory gone.
					s.t.Logf("capturetest: write %s: %v", f.name, err)
				} else {
					s.t.Errorf("capturetest: write %s: %v", f.name, err)
				}
				return
			}
			s.mu.Lock()
			s.written = append(s.written, f.name)
			s.mu.Unlock()
		}()
	}
}

// stageOf reads the stage from a "<prefix>-<stage>" profile prefix.
func stageOf(prefix string) string {
	switch {
	case strings.HasSuffix(prefix, "-prefill"):
		return "prefill"
	case strings.HasSuffix(prefix, "-decode"):
		return "decode"
	}
	return ""
}

// write writes a trace file the way a slow background writer does: the
// first half, a pause, the rest.
func (s *Server) write(name string, b []byte) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	half := len(b) / 2
	if _, err := f.Write(b[:half]); err != nil {
		f.Close()
		return err
	}
	if s.cfg.GrowFor > 0 {
		time.Sleep(s.cfg.GrowFor)
	}
	if _, err := f.Write(b[half:]); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// hangWriter keeps an answer until flush.
type hangWriter struct {
	http.ResponseWriter
	status int
	body   []byte
}

func (h *hangWriter) WriteHeader(status int) { h.status = status }
func (h *hangWriter) Write(b []byte) (int, error) {
	h.body = append(h.body, b...)
	return len(b), nil
}

func (h *hangWriter) flush() {
	if h.status != 0 {
		h.ResponseWriter.WriteHeader(h.status)
	}
	h.ResponseWriter.Write(h.body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
