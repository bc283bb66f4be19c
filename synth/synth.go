// Package synth writes synthetic but realistic PyTorch-profiler (Kineto) Chrome
// traces of LLM serving runs, in the file layouts of SGLang, vLLM, TensorRT-LLM
// and TokenSpeed, together with a manifest of what was written.
//
// The manifest counts are computed while the bytes are produced, without any
// parser, so ingest tests can compare a warehouse against them exactly.
// Output is streamed: memory stays bounded whatever TargetBytes is.
package synth

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tracehouse/tracehouse/vocab"
)

// Framework names accepted in Options.Framework.
const (
	SGLang     = vocab.SGLang
	VLLM       = vocab.VLLM
	TRTLLM     = vocab.TRTLLM
	TokenSpeed = vocab.TokenSpeed
)

// Stage names used in manifests (the warehouse vocabulary).
const (
	StagePrefill = vocab.Prefill
	StageDecode  = vocab.Decode
	StageMixed   = vocab.Mixed
	StageUnknown = vocab.StageUnknown
)

// Time bases accepted in Options.TimeBase.
const (
	TimeBaseNS      = "base_ns"  // baseTimeNanoseconds + ts relative to it
	TimeBaseEpochUS = "epoch_us" // ts absolute epoch microseconds
)

// Options selects what Generate writes.
type Options struct {
	Framework   string // one of vocab.Frameworks
	Dir         string // output root; files go in the framework's layout beneath it
	Run         string // run directory name under Dir
	Model       string // e.g. "meta-llama/Llama-3.1-8B-Instruct"
	Ranks       int    // TP ranks, one file per rank (per stage where the framework splits stages)
	Steps       int    // forward steps per trace (ignored when TargetBytes > 0)
	Layers      int    // decoder layers per step (0: a small default)
	Graph       bool   // CUDA-graph replay of decode steps (formal); false = eager (mapping)
	Gzip        bool   // ignored for trtllm (always plain trace.json)
	TargetBytes int64  // if >0, keep adding steps until the uncompressed JSON reaches about this size
	TimeBase    string // "base_ns" (default) or "epoch_us"
	MoE         bool
	Seed        int64

	// Stage restricts the steps written: "" writes the framework's default
	// (SGLang: one EXTEND and one DECODE file per rank; others: prefill,
	// decode and mixed steps in one file); "prefill" or "decode" writes only
	// that kind of step (SGLang: only that file).
	Stage string
	// GzipLevel is the compression level for .gz output; 0 means
	// gzip.BestSpeed, which keeps 1 GB traces fast to write.
	GzipLevel int
	// Start is the wall-clock start of the trace; zero means a fixed date
	// derived from Seed, so that output is deterministic.
	Start time.Time

	// Noise is the relative spread of each launch's duration around its
	// mean (uniform, +-Noise); 0 means the default 0.1.
	Noise float64
	// BatchSize, when > 0, fixes every decode step's batch (and prefill
	// steps' requests) instead of drawing it per step, so that steps differ
	// only by Noise.
	BatchSize int
	// Edits change kernels (slower, added, removed, renamed, split) for
	// comparison tests.
	Edits []Edit
}

// StageTotals is the expected GPU work of one stage in one trace.
type StageTotals struct {
	Count int64 `json:"count"`
	DurNS int64 `json:"dur_ns"`
}

// File describes one written trace; every count is of events in traceEvents.
type File struct {
	Path      string `json:"path"`
	Framework string `json:"framework"`
	Rank      int    `json:"rank"`
	WorldSize int    `json:"world_size"`
	// Stage is the file-level stage: "prefill"/"decode" when the file name
	// says so, "mixed" when only annotations tell, "unknown" when nothing does.
	Stage string `json:"stage"`
	// Role is what warehouse identity rules derive: "mapping" when the
	// run's server_args.json disables CUDA graphs, else "formal" (also for
	// vLLM and TRT-LLM runs, which have no server_args.json).
	Role  string `json:"role"`
	Graph bool   `json:"graph"` // decode steps replayed through cudaGraphLaunch
	Model string `json:"model"`

	UncompressedBytes int64 `json:"uncompressed_bytes"`
	Events            int64 `json:"events"`         // every element of traceEvents
	Kernels           int64 `json:"kernels"`        // cat kernel
	Memcpy            int64 `json:"memcpy"`         // cat gpu_memcpy
	Memset            int64 `json:"memset"`         // cat gpu_memset
	Launches          int64 `json:"launches"`       // cat cuda_runtime + cuda_driver (all of them)
	GraphLaunches     int64 `json:"graph_launches"` // cudaGraphLaunch
	CPUOps            int64 `json:"cpu_ops"`        // cat cpu_op
	PyFrames          int64 `json:"py_frames"`      // cat python_function
	Annotations       int64 `json:"annotations"`    // cat user_annotation + gpu_user_annotation
	Flows             int64 `json:"flows"`          // ac2g events, "s" and "f" each counted
	GPUEvents         int64 `json:"gpu_events"`     // Kernels+Memcpy+Memset
	GPUDurNS          int64 `json:"gpu_dur_ns"`     // exact sum of dur over GPU events
	GraphKernels      int64 `json:"graph_kernels"`  // GPU events replayed by a cudaGraphLaunch
	ZeroDurKernels    int64 `json:"zero_dur_kernels"`

	BaseTimeNS int64 `json:"base_time_ns"` // baseTimeNanoseconds, 0 for epoch_us traces
	GPUStartNS int64 `json:"gpu_start_ns"` // absolute ns of the first GPU event start
	GPUEndNS   int64 `json:"gpu_end_ns"`   // absolute ns of the last GPU event end

	// StageGPU is the expected per-kernel stage -> GPU events and time.
	StageGPU map[string]StageTotals `json:"stage_gpu"`
	// Sites counts eager GPU events by the innermost framework python_function
	// active at their launch (the expected attribution); graph-replayed
	// events and traces without Python stacks are not counted.
	Sites map[string]int64 `json:"sites,omitempty"`
}

// Manifest lists every trace file a call wrote.
type Manifest struct {
	Files []File `json:"files"`
}

// Generate writes the traces described by opt and returns their manifest.
func Generate(opt Options) (Manifest, error) {
	opt, err := normalize(opt)
	if err != nil {
		return Manifest{}, err
	}
	runDir := filepath.Join(opt.Dir, opt.Run)
	var m Manifest
	jobs, sidecar, err := plan(opt, runDir)
	if err != nil {
		return Manifest{}, err
	}
	if sidecar != "" {
		if err := writeServerArgs(sidecar, opt); err != nil {
			return Manifest{}, err
		}
	}
	for _, j := range jobs {
		f, err := writeTrace(opt, j)
		if err != nil {
			return Manifest{}, fmt.Errorf("synth: %s rank %d: %w", opt.Framework, j.rank, err)
		}
		m.Files = append(m.Files, f)
	}
	return m, nil
}

// job is one trace file to write.
type job struct {
	path      string
	rank      int
	fileStage string // stage the file name carries, "" if none
	only      string // every step has this stage when set
	mixed     bool   // the step mix includes mixed prefill+decode steps
	gzip      bool
	stageIdx  int // distinguishes the files of one rank in the RNG stream
}

func normalize(opt Options) (Options, error) {
	if !slices.Contains(vocab.Frameworks, opt.Framework) {
		return opt, fmt.Errorf("synth: unknown framework %q (want one of %s)", opt.Framework, strings.Join(vocab.Frameworks, ", "))
	}
	if opt.Dir == "" {
		return opt, fmt.Errorf("synth: Options.Dir is empty")
	}
	if opt.Run == "" {
		opt.Run = "run"
	}
	if opt.Model == "" {
		opt.Model = "meta-llama/Llama-3.1-8B-Instruct"
	}
	if opt.Ranks <= 0 {
		opt.Ranks = 1
	}
	if opt.Ranks > 64 {
		return opt, fmt.Errorf("synth: %d ranks is more than the 64 supported", opt.Ranks)
	}
	if opt.Steps <= 0 {
		opt.Steps = 3
	}
	if opt.Layers <= 0 {
		opt.Layers = 4
	}
	if opt.Layers > 512 {
		return opt, fmt.Errorf("synth: %d layers is more than the 512 supported", opt.Layers)
	}
	if opt.Framework == TRTLLM {
		opt.Gzip = false
	}
	switch opt.TimeBase {
	case "":
		opt.TimeBase = TimeBaseNS
	case TimeBaseNS, TimeBaseEpochUS:
	default:
		return opt, fmt.Errorf("synth: unknown time base %q (want base_ns or epoch_us)", opt.TimeBase)
	}
	switch opt.Stage {
	case "", StagePrefill, StageDecode:
	default:
		return opt, fmt.Errorf("synth: unknown stage %q (want prefill, decode or empty)", opt.Stage)
	}
	if opt.Noise < 0 || opt.Noise >= 1 {
		return opt, fmt.Errorf("synth: noise %v out of range [0, 1)", opt.Noise)
	}
	if opt.GzipLevel < 0 || opt.GzipLevel > 9 {
		return opt, fmt.Errorf("synth: gzip level %d out of range 0..9", opt.GzipLevel)
	}
	if opt.Start.IsZero() {
		// A fixed mid-2025 date, shifted by the seed so runs differ.
		s := opt.Seed % 1000003
		if s < 0 {
			s = -s
		}
		opt.Start = time.Unix(1751289296+s*3607, 123456789).UTC()
	}
	return opt, nil
}

// stepStage returns the stage of step i of a file: only (when set) for
// every step, else the framework's own mix: a prefill first, then decode
// steps with a prefill or, where the framework batches both together, a
// mixed step now and then.
func stepStage(only string, i int, mixed bool) string {
	switch {
	case only != "":
		return only
	case i == 0:
		return StagePrefill
	case i%5 == 3 && mixed:
		return StageMixed
	case i%5 == 3:
		return StagePrefill
	default:
		return StageDecode
	}
}

func plan(opt Options, runDir string) ([]job, string, error) {
	var jobs []job
	var sidecar string
	ext := ".trace.json"
	if opt.Gzip {
		ext += ".gz"
	}
	start := opt.Start
	unixID := strconv.FormatInt(start.Unix(), 10) + "." + fmt.Sprintf("%07d", start.Nanosecond()/100)
	switch opt.Framework {
	case SGLang:
		tsDir := filepath.Join(runDir, start.Format("2006-01-02_15-04-05"))
		sidecar = filepath.Join(tsDir, "server_args.json")
		stages := []string{StagePrefill, StageDecode}
		if opt.Stage != "" {
			stages = []string{opt.Stage}
		}
		for r := 0; r < opt.Ranks; r++ {
			for si, st := range stages {
				tag := "EXTEND"
				if st == StageDecode {
					tag = "DECODE"
				}
				name := unixID + "-TP-" + strconv.Itoa(r) + "-" + tag + ext
				jobs = append(jobs, job{path: filepath.Join(tsDir, name), rank: r, fileStage: st,
					only: st, gzip: opt.Gzip, stageIdx: si})
			}
		}
	case VLLM:
		id := strconv.FormatInt(start.UnixNano(), 10)
		for r := 0; r < opt.Ranks; r++ {
			name := "dp0_pp0_tp" + strconv.Itoa(r) + "_dcp0_ep0_rank" + strconv.Itoa(r) + "." + id + ".pt" + ext
			jobs = append(jobs, job{path: filepath.Join(runDir, name), rank: r,
				only: opt.Stage, mixed: true, gzip: opt.Gzip})
		}
	case TRTLLM:
		for r := 0; r < opt.Ranks; r++ {
			p := filepath.Join(runDir, "trace.json")
			if opt.Ranks > 1 {
				// One fixed file name per process: keep ranks apart by
				// directory; the rank itself is only in distributedInfo.
				p = filepath.Join(runDir, "r"+strconv.Itoa(r), "trace.json")
			}
			jobs = append(jobs, job{path: p, rank: r, only: opt.Stage, mixed: true})
		}
	case TokenSpeed:
		sidecar = filepath.Join(runDir, "server_args.json")
		for r := 0; r < opt.Ranks; r++ {
			name := unixID + "-TP-" + strconv.Itoa(r) + ext
			jobs = append(jobs, job{path: filepath.Join(runDir, name), rank: r,
				only: opt.Stage, gzip: opt.Gzip})
		}
	}
	return jobs, sidecar, nil
}

// writeServerArgs writes the server_args.json an SGLang-like server dumps.
func writeServerArgs(path string, opt Options) error {
	type kv struct {
		k string
		v any
	}
	args := []kv{
		{"model_path", opt.Model},
		{"tokenizer_path", opt.Model},
		{"served_model_name", opt.Model},
		{"host", "0.0.0.0"},
		{"port", 30000},
		{"dtype", "auto"},
		{"kv_cache_dtype", "auto"},
		{"trust_remote_code", opt.MoE},
		{"mem_fraction_static", 0.85},
		{"max_running_requests", nil},
		{"chunked_prefill_size", 8192},
		{"schedule_policy", "fcfs"},
		{"tp_size", opt.Ranks},
		{"dp_size", 1},
		{"ep_size", 1},
		{"pp_size", 1},
		{"random_seed", opt.Seed},
		{"attention_backend", "flashinfer"},
		{"sampling_backend", "flashinfer"},
		{"disable_cuda_graph", !opt.Graph},
		{"cuda_graph_max_bs", 160},
		{"cuda_graph_bs", nil},
		{"enable_torch_compile", false},
		{"disable_custom_all_reduce", false},
		{"enable_flashinfer_allreduce_fusion", false},
		{"enable_dp_attention", false},
		{"disable_overlap_schedule", false},
	}
	if opt.Framework == TokenSpeed {
		args = append(args, kv{"runtime", "tokenspeed"}, kv{"tokenspeed_version", "0.4.2"},
			kv{"attention_backend_decode", "tokenspeed_mla"}, kv{"enable_allreduce_fusion", false})
	} else {
		args = append(args, kv{"version", "0.5.4.post1"})
	}
	// Written by hand to keep SGLang's key order (a map would sort it).
	var b strings.Builder
	b.WriteString("{\n")
	for i, a := range args {
		v, err := json.Marshal(a.v)
		if err != nil {
			return fmt.Errorf("encode server arg %s: %w", a.k, err)
		}
		b.WriteString("  " + strconv.Quote(a.k) + ": " + string(v))
		if i < len(args)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	return nil
}

// sortedKeys returns m's keys in order, for deterministic iteration.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
