package ingest

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/vocab"
)

// Site is what a python_function name says about where code runs.
type Site struct {
	Name      string
	File      string // "" for nn.Module markers and built-ins
	Line      int    // 0 when unknown
	Func      string
	Display   string // func @ rel_path:line
	RelPath   string // path trimmed to the framework-relative part
	Framework string // sglang | vllm | trtllm | tokenspeed | torch | python | other
	Wrapper   bool
}

// Tier says how good a launch site a frame is: the innermost frame of the
// highest tier on the stack wins.
func (s *Site) Tier() int8 {
	switch {
	case s.Wrapper || s.File == "":
		return 0
	case slices.Contains(vocab.Frameworks, s.Framework):
		return 2
	case s.Framework == "other":
		return 1 // user code outside any framework: better than nothing
	}
	return 0
}

// frameworkRoots maps path markers to the framework whose code they are, with
// the marker's offset where the framework-relative path starts. The first
// match in this order wins, so python/sglang/ beats a bare sglang/.
var frameworkRoots = []struct {
	marker, framework string
}{
	{"python/sglang/", vocab.SGLang},
	{"sglang/", vocab.SGLang},
	{"python/tokenspeed/", vocab.TokenSpeed},
	{"tokenspeed/", vocab.TokenSpeed},
	{"tokenspeed_kernel/", vocab.TokenSpeed},
	{"tokenspeed_mla/", vocab.TokenSpeed},
	{"tensorrt_llm/", vocab.TRTLLM},
	{"vllm/", vocab.VLLM},
	{"torch/", "torch"},
	{"triton/", "torch"},
}

// Wrapper frames never name a launch site: they sit between the caller that
// matters and the kernel.
var (
	wrapperFiles = []string{
		"torch/nn/modules/module.py", "torch/_ops.py", "torch/utils/_contextlib.py",
		"torch/_dynamo/", "torch/_compile.py", "torch/cuda/graphs.py",
		"contextlib.py", "threading.py", "asyncio/", "concurrent/futures/",
		"triton/runtime/", "functools.py",
		"cuda_graph_runner.py", "cuda_graph_runner", "graph_runner.py", "cudagraph",
		"piecewise_backend",
	}
	wrapperFuncs = map[string]bool{
		"__call__": true, "_call_impl": true, "_wrapped_call_impl": true,
		"__torch_function__": true, "decorate_context": true, "wrapper": true,
		"inner": true, "_fn": true, "replay": true,
		// Executor and scheduler loops of the serving frameworks.
		"event_loop_normal": true, "event_loop_overlap": true, "event_loop_pp": true,
		"run_scheduler_process": true, "_executor_loop": true, "_executor_loop_overlap": true,
		"worker_busy_loop": true, "execute_model": true, "run_batch": true,
		"forward_batch_generation": true, "run_engine_core": true, "run_busy_loop": true,
	}
)

// ParseSite parses a python_function event name such as
// `/sgl/python/sglang/srt/layers/layernorm.py(123): forward_cuda`.
func ParseSite(name string) Site {
	s := Site{Name: name, Framework: "other"}
	switch {
	case strings.HasPrefix(name, NVTXSitePrefix):
		// An NVTX range standing for a location in an nsys trace.
		s.Func, s.Display, s.Framework = name[len(NVTXSitePrefix):], name, "nvtx"
		return s
	case strings.HasPrefix(name, "nn.Module: "), strings.HasPrefix(name, "<built-in"), strings.HasPrefix(name, "torch/"+"autograd"):
		s.Func = name
		s.Display = name
		s.Framework = "torch"
		s.Wrapper = true
		return s
	}
	file, line, fn, ok := splitFrame(name)
	if !ok {
		s.Func = name
		s.Display = name
		return s
	}
	s.File, s.Line, s.Func = file, line, fn
	p := strings.ReplaceAll(file, "\\", "/")
	s.RelPath = p
	for _, r := range frameworkRoots {
		if i := strings.Index(p, r.marker); i >= 0 && (i == 0 || p[i-1] == '/') {
			s.Framework = r.framework
			s.RelPath = p[i:]
			break
		}
	}
	if s.Framework == "other" && isStdlib(p) {
		s.Framework = "python"
	}
	if s.Framework == "other" {
		// Keep the last two path elements of code we cannot place.
		if i := strings.LastIndexByte(p, '/'); i > 0 {
			if j := strings.LastIndexByte(p[:i], '/'); j >= 0 {
				s.RelPath = p[j+1:]
			}
		}
	}
	s.Display = fn + " @ " + s.RelPath + ":" + strconv.Itoa(line)
	if wrapperFuncs[fn] || strings.HasPrefix(fn, "<") {
		s.Wrapper = true
	}
	for _, w := range wrapperFiles {
		if strings.Contains(p, w) {
			s.Wrapper = true
			break
		}
	}
	return s
}

// splitFrame splits `path(123): func`.
func splitFrame(name string) (file string, line int, fn string, ok bool) {
	i := strings.Index(name, "): ")
	if i < 0 {
		return "", 0, "", false
	}
	j := strings.LastIndexByte(name[:i], '(')
	if j <= 0 {
		return "", 0, "", false
	}
	n, err := strconv.Atoi(name[j+1 : i])
	if err != nil || n < 0 {
		return "", 0, "", false
	}
	return name[:j], n, name[i+3:], true
}

func isStdlib(p string) bool {
	if strings.Contains(p, "site-packages/") || strings.Contains(p, "dist-packages/") {
		return false
	}
	return strings.Contains(p, "/lib/python3") || strings.HasPrefix(p, "<frozen")
}
