package synth

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// decoded is a trace read back with encoding/json, independent of the writer.
type decoded struct {
	base   int64
	events []map[string]any
	raw    []byte
}

func readTrace(t testing.TB, path string) decoded {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	var top struct {
		TraceEvents         []map[string]any `json:"traceEvents"`
		BaseTimeNanoseconds json.Number      `json:"baseTimeNanoseconds"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // keep ts/dur text exact
	if err := dec.Decode(&top); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	d := decoded{events: top.TraceEvents, raw: data}
	if top.BaseTimeNanoseconds != "" {
		d.base, err = strconv.ParseInt(string(top.BaseTimeNanoseconds), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// nsOf parses a microsecond decimal text into integer ns without floats.
func nsOf(t testing.TB, v any) int64 {
	t.Helper()
	num, ok := v.(json.Number)
	if !ok {
		t.Fatalf("not a number: %#v", v)
	}
	s := string(num)
	ip, fp, _ := strings.Cut(s, ".")
	if len(fp) != 3 {
		t.Fatalf("time %q does not have exactly 3 decimals", s)
	}
	i, err1 := strconv.ParseInt(ip, 10, 64)
	f, err2 := strconv.ParseInt(fp, 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("bad time %q", s)
	}
	return i*1000 + f
}

func str(e map[string]any, k string) string { s, _ := e[k].(string); return s }

func argInt(t testing.TB, e map[string]any, k string) (int64, bool) {
	a, _ := e["args"].(map[string]any)
	v, ok := a[k]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v.(json.Number)), 10, 64)
	if err != nil {
		t.Fatalf("arg %s: %v", k, err)
	}
	return n, true
}

var smallCases = []Options{
	{Framework: SGLang, Ranks: 2, Steps: 3, Layers: 2, Gzip: true, Seed: 1},
	{Framework: SGLang, Ranks: 2, Steps: 3, Layers: 2, Gzip: true, Graph: true, Seed: 1},
	{Framework: VLLM, Model: "Qwen/Qwen3-30B-A3B", MoE: true, Ranks: 2, Steps: 5, Layers: 2, Gzip: true, Seed: 2},
	{Framework: VLLM, Ranks: 1, Steps: 5, Layers: 2, Graph: true, TimeBase: TimeBaseEpochUS, Seed: 3},
	{Framework: TRTLLM, Ranks: 1, Steps: 4, Layers: 2, Seed: 4},
	{Framework: TRTLLM, Ranks: 2, Steps: 4, Layers: 2, Graph: true, Seed: 4},
	{Framework: TokenSpeed, Model: "deepseek-ai/DeepSeek-V3", MoE: true, Ranks: 1, Steps: 4, Layers: 4, Gzip: true, Seed: 5},
	{Framework: TokenSpeed, Model: "deepseek-ai/DeepSeek-V3", MoE: true, Ranks: 2, Steps: 4, Layers: 4, Graph: true, TimeBase: TimeBaseEpochUS, Seed: 6},
}

var stageAnno = regexp.MustCompile(`^(step\[(EXTEND|DECODE) |execute_\d+_context_(\d+)\(\d+\)_generation_(\d+)\(\d+\)$)`)

func annoStage(name string) string {
	m := stageAnno.FindStringSubmatch(name)
	switch {
	case m == nil:
		return ""
	case m[2] == "EXTEND":
		return StagePrefill
	case m[2] == "DECODE":
		return StageDecode
	case m[3] != "0" && m[4] == "0":
		return StagePrefill
	case m[3] == "0":
		return StageDecode
	}
	return StageMixed
}

// TestManifestMatchesRecount decodes every written file with encoding/json
// and recounts what the manifest claims.
func TestManifestMatchesRecount(t *testing.T) {
	t.Parallel()
	for _, opt := range smallCases {
		opt.Dir = t.TempDir()
		m, err := Generate(opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Files) == 0 {
			t.Fatalf("%s: no files", opt.Framework)
		}
		for _, f := range m.Files {
			t.Run(opt.Framework+"/"+filepath.Base(f.Path), func(t *testing.T) {
				d := readTrace(t, f.Path)
				if int64(len(d.raw)) != f.UncompressedBytes {
					t.Errorf("bytes: manifest %d, file %d", f.UncompressedBytes, len(d.raw))
				}
				if d.base != f.BaseTimeNS {
					t.Errorf("base time: manifest %d, file %d", f.BaseTimeNS, d.base)
				}
				var got File
				got.StageGPU = map[string]StageTotals{}
				got.Events = int64(len(d.events))
				type win struct {
					lo, hi int64
					stage  string
				}
				var wins []win
				for _, e := range d.events {
					if str(e, "cat") == "gpu_user_annotation" {
						if st := annoStage(str(e, "name")); st != "" {
							lo := nsOf(t, e["ts"])
							wins = append(wins, win{lo, lo + nsOf(t, e["dur"]), st})
						}
					}
				}
				minTS, maxEnd := int64(1<<62), int64(0)
				for _, e := range d.events {
					cat := str(e, "cat")
					switch cat {
					case "kernel", "gpu_memcpy", "gpu_memset":
						ts, dur := nsOf(t, e["ts"]), nsOf(t, e["dur"])
						got.GPUEvents++
						got.GPUDurNS += dur
						minTS, maxEnd = min(minTS, ts), max(maxEnd, ts+dur)
						switch cat {
						case "kernel":
							got.Kernels++
						case "gpu_memcpy":
							got.Memcpy++
						default:
							got.Memset++
						}
						stage := f.Stage
						if f.Stage == StageMixed {
							stage = ""
							for _, w := range wins {
								if ts >= w.lo && ts+dur <= w.hi {
									if stage != "" {
										t.Fatalf("kernel at %d in two stage windows", ts)
									}
									stage = w.stage
								}
							}
							if stage == "" {
								t.Fatalf("kernel %q at %d outside every stage window", str(e, "name"), ts)
							}
						}
						st := got.StageGPU[stage]
						st.Count++
						st.DurNS += dur
						got.StageGPU[stage] = st
					case "cuda_runtime", "cuda_driver":
						got.Launches++
						if str(e, "name") == "cudaGraphLaunch" {
							got.GraphLaunches++
						}
					case "cpu_op":
						got.CPUOps++
					case "python_function":
						got.PyFrames++
					case "user_annotation", "gpu_user_annotation":
						got.Annotations++
					case "ac2g":
						got.Flows++
					}
				}
				base := f.BaseTimeNS
				if got.GPUEvents > 0 && (minTS+base != f.GPUStartNS || maxEnd+base != f.GPUEndNS) {
					t.Errorf("GPU span: manifest [%d,%d], file [%d,%d]", f.GPUStartNS, f.GPUEndNS, minTS+base, maxEnd+base)
				}
				check := func(name string, want, have int64) {
					if want != have {
						t.Errorf("%s: manifest %d, recount %d", name, want, have)
					}
				}
				check("events", f.Events, got.Events)
				check("kernels", f.Kernels, got.Kernels)
				check("memcpy", f.Memcpy, got.Memcpy)
				check("memset", f.Memset, got.Memset)
				check("gpu events", f.GPUEvents, got.GPUEvents)
				check("gpu dur", f.GPUDurNS, got.GPUDurNS)
				check("launches", f.Launches, got.Launches)
				check("graph launches", f.GraphLaunches, got.GraphLaunches)
				check("cpu ops", f.CPUOps, got.CPUOps)
				check("py frames", f.PyFrames, got.PyFrames)
				check("annotations", f.Annotations, got.Annotations)
				check("flows", f.Flows, got.Flows)
				for _, k := range sortedKeys(f.StageGPU) {
					if f.StageGPU[k] != got.StageGPU[k] {
						t.Errorf("stage %s: manifest %+v, recount %+v", k, f.StageGPU[k], got.StageGPU[k])
					}
				}
				if len(f.StageGPU) != len(got.StageGPU) {
					t.Errorf("stages: manifest %v, recount %v", f.StageGPU, got.StageGPU)
				}
				checkStructure(t, opt, f, d)
			})
		}
	}
}

// checkStructure asserts what ingest relies on: nested Python stacks,
// launches inside framework code, graph replays sharing a correlation,
// stream overlap, unsorted output.
func checkStructure(t *testing.T, opt Options, f File, d decoded) {
	type span struct {
		lo, hi int64
		tid    string
		name   string
	}
	frames := map[int64]span{}
	launches := map[int64]span{}
	graphCorr := map[int64]bool{}
	var kernels []map[string]any
	unsorted := false
	var prev int64
	for _, e := range d.events {
		if ts, ok := e["ts"].(json.Number); ok && str(e, "ph") == "X" {
			v := nsOf(t, ts)
			if v < prev {
				unsorted = true
			}
			prev = v
		}
		tid := fmt.Sprint(e["tid"])
		switch str(e, "cat") {
		case "python_function":
			id, _ := argInt(t, e, "Python id")
			lo := nsOf(t, e["ts"])
			frames[id] = span{lo, lo + nsOf(t, e["dur"]), tid, str(e, "name")}
		case "cuda_runtime", "cuda_driver":
			c, ok := argInt(t, e, "correlation")
			if !ok {
				t.Fatalf("launch without correlation")
			}
			lo := nsOf(t, e["ts"])
			launches[c] = span{lo, lo + nsOf(t, e["dur"]), tid, str(e, "name")}
			if str(e, "name") == "cudaGraphLaunch" {
				graphCorr[c] = true
			}
		case "kernel", "gpu_memcpy", "gpu_memset":
			kernels = append(kernels, e)
		}
	}
	if !unsorted {
		t.Errorf("events are sorted by ts; Kineto output is not")
	}
	// Every child frame lies inside its parent, on the same thread.
	for _, e := range d.events {
		if str(e, "cat") != "python_function" {
			continue
		}
		id, _ := argInt(t, e, "Python id")
		p, ok := argInt(t, e, "Python parent id")
		if !ok {
			continue
		}
		c, pa := frames[id], frames[p]
		if pa.tid != c.tid || c.lo < pa.lo || c.hi > pa.hi {
			t.Fatalf("frame %q [%d,%d] not inside parent %q [%d,%d]", c.name, c.lo, c.hi, pa.name, pa.lo, pa.hi)
		}
	}
	marker := map[string]string{SGLang: "python/sglang/", VLLM: "site-packages/vllm/", TokenSpeed: "python/tokenspeed/"}[opt.Framework]
	perCorr := map[int64]int{}
	for _, k := range kernels {
		c, _ := argInt(t, k, "correlation")
		l, ok := launches[c]
		if !ok {
			t.Fatalf("kernel %q correlation %d has no launch", str(k, "name"), c)
		}
		perCorr[c]++
		if graphCorr[c] || marker == "" {
			continue
		}
		inFramework := false
		for _, fr := range frames {
			if fr.tid == l.tid && fr.lo <= l.lo && l.hi <= fr.hi && strings.Contains(fr.name, marker) {
				inFramework = true
				break
			}
		}
		if !inFramework {
			t.Fatalf("launch %s of %q is not inside %s code", l.name, str(k, "name"), marker)
		}
	}
	if opt.Framework == TRTLLM && len(frames) > 0 {
		t.Errorf("TRT-LLM trace has python_function events")
	}
	if opt.Graph && opt.Stage != StagePrefill && f.Stage != StagePrefill {
		shared := false
		for c := range graphCorr {
			if perCorr[c] > 1 {
				shared = true
			}
		}
		if !shared {
			t.Errorf("graph trace: no cudaGraphLaunch correlates with several kernels")
		}
	}
	// PDL: in graph replays the norm after the all-reduce starts before the
	// all-reduce ends, on the same stream.
	if opt.Graph && opt.Ranks > 1 && opt.Framework == SGLang && f.Stage == StageDecode {
		var lastEnd int64
		overlaps := 0
		for _, k := range kernels { // emitted in stream order, main stream first
			if fmt.Sprint(k["tid"]) != "7" {
				continue
			}
			lo := nsOf(t, k["ts"])
			if lo < lastEnd {
				overlaps++
			}
			lastEnd = max(lastEnd, lo+nsOf(t, k["dur"]))
		}
		if overlaps == 0 {
			t.Errorf("no same-stream (PDL) overlap in a graph decode trace")
		}
	}
	// Overlap: with TP>1 in prefill a collective on the comm stream runs
	// while the compute stream works.
	if opt.Ranks > 1 && f.Stage == StagePrefill && opt.Framework == SGLang {
		type iv struct{ lo, hi int64 }
		var main, comm []iv
		for _, k := range kernels {
			lo := nsOf(t, k["ts"])
			v := iv{lo, lo + nsOf(t, k["dur"])}
			switch fmt.Sprint(k["tid"]) {
			case "7":
				main = append(main, v)
			case "22":
				comm = append(comm, v)
			}
		}
		overlap := false
		for _, c := range comm {
			for _, m := range main {
				if m.lo < c.hi && c.lo < m.hi {
					overlap = true
				}
			}
		}
		if !overlap {
			t.Errorf("no comm/compute overlap")
		}
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	opt := Options{Framework: VLLM, Model: "Qwen/Qwen3-30B-A3B", MoE: true, Ranks: 2, Steps: 4, Layers: 2, Gzip: true, Seed: 42}
	var sums [2][]string
	for i := range sums {
		opt.Dir = t.TempDir()
		m, err := Generate(opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m.Files {
			b, err := os.ReadFile(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(opt.Dir, f.Path)
			sums[i] = append(sums[i], rel+":"+string(b))
		}
	}
	if len(sums[0]) != len(sums[1]) {
		t.Fatal("different file sets")
	}
	for i := range sums[0] {
		if sums[0][i] != sums[1][i] {
			t.Fatalf("file %d differs between two runs with the same seed", i)
		}
	}
	opt.Seed = 43
	opt.Dir = t.TempDir()
	m, err := Generate(opt)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(m.Files[0].Path)
	rel, _ := filepath.Rel(opt.Dir, m.Files[0].Path)
	if rel+":"+string(b) == sums[0][0] {
		t.Error("another seed gave the same bytes")
	}
}

func TestTargetBytes(t *testing.T) {
	t.Parallel()
	for _, target := range []int64{8 << 20, 24 << 20} {
		opt := Options{Framework: SGLang, Ranks: 1, Layers: 8, TargetBytes: target, Stage: StageDecode, Dir: t.TempDir(), Seed: 7}
		m, err := Generate(opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Files) != 1 {
			t.Fatalf("want 1 file, got %d", len(m.Files))
		}
		got := m.Files[0].UncompressedBytes
		if got < target*9/10 || got > target*11/10 {
			t.Errorf("target %d: wrote %d (outside +-10%%)", target, got)
		}
		st, err := os.Stat(m.Files[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() != got {
			t.Errorf("plain file size %d, manifest %d", st.Size(), got)
		}
	}
}

func TestEpochMicrosKeepNanoseconds(t *testing.T) {
	t.Parallel()
	opt := Options{Framework: VLLM, Ranks: 1, Steps: 2, Layers: 1, TimeBase: TimeBaseEpochUS, Dir: t.TempDir(), Seed: 9}
	m, err := Generate(opt)
	if err != nil {
		t.Fatal(err)
	}
	d := readTrace(t, m.Files[0].Path)
	if d.base != 0 || bytes.Contains(d.raw, []byte("baseTimeNanoseconds")) {
		t.Fatal("epoch_us trace has a base time")
	}
	// 16-digit epoch microseconds with 3 decimals: beyond float64 precision.
	if !regexp.MustCompile(`"ts": 1\d{15}\.\d{3}`).Match(d.raw) {
		t.Fatal("no absolute epoch-microsecond ts")
	}
}

// TestLateSeedsKeepGPUWindows: the seed moves the start by up to ~114
// years (to 2139); GPU annotation windows then stayed at the 2^62 ns
// sentinel (2116) they began from, so each ran ~24 years from before the
// trace (ingest refuses such a trace).
func TestLateSeedsKeepGPUWindows(t *testing.T) {
	t.Parallel()
	m, err := Generate(Options{Framework: SGLang, Ranks: 1, Steps: 2, Layers: 1, Dir: t.TempDir(), Seed: 1000002})
	if err != nil {
		t.Fatal(err)
	}
	d := readTrace(t, m.Files[0].Path)
	n := 0
	for _, e := range d.events {
		if str(e, "cat") == "gpu_user_annotation" {
			n++
			if ts, dur := nsOf(t, e["ts"]), nsOf(t, e["dur"]); ts < 0 || dur > 1e9 {
				t.Errorf("GPU window ts %d ns, dur %d ns (relative to the base)", ts, dur)
			}
		}
	}
	if n == 0 {
		t.Fatal("no GPU annotation")
	}
}

func TestLayoutNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	want := map[string]*regexp.Regexp{
		SGLang:     regexp.MustCompile(`^sg/\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d/\d+\.\d+-TP-[01]-(EXTEND|DECODE)\.trace\.json\.gz$`),
		VLLM:       regexp.MustCompile(`^vl/dp0_pp0_tp([01])_dcp0_ep0_rank([01])\.\d+\.pt\.trace\.json\.gz$`),
		TRTLLM:     regexp.MustCompile(`^tr/trace\.json$`),
		TokenSpeed: regexp.MustCompile(`^ts/\d+\.\d+-TP-0\.trace\.json\.gz$`),
	}
	runs := map[string]string{SGLang: "sg", VLLM: "vl", TRTLLM: "tr", TokenSpeed: "ts"}
	for fw, re := range want {
		ranks := 2
		if fw == TRTLLM || fw == TokenSpeed {
			ranks = 1
		}
		m, err := Generate(Options{Framework: fw, Dir: dir, Run: runs[fw], Ranks: ranks, Steps: 1, Layers: 1, Gzip: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m.Files {
			rel, _ := filepath.Rel(dir, f.Path)
			if !re.MatchString(filepath.ToSlash(rel)) {
				t.Errorf("%s: unexpected path %s", fw, rel)
			}
		}
	}
	for _, p := range []string{"sg/*/server_args.json", "ts/server_args.json"} {
		ms, _ := filepath.Glob(filepath.Join(dir, p))
		if len(ms) != 1 {
			t.Errorf("want one %s, got %v", p, ms)
			continue
		}
		var args map[string]any
		b, _ := os.ReadFile(ms[0])
		if err := json.Unmarshal(b, &args); err != nil {
			t.Fatalf("%s: %v", ms[0], err)
		}
		if _, ok := args["tp_size"]; !ok {
			t.Errorf("%s: no tp_size", ms[0])
		}
	}
	if _, err := Generate(Options{Framework: "nope", Dir: dir}); err == nil {
		t.Error("unknown framework accepted")
	}
}

func BenchmarkGenerate(b *testing.B) {
	for _, gz := range []bool{false, true} {
		name := "plain"
		if gz {
			name = "gzip"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			var total int64
			for i := 0; i < b.N; i++ {
				m, err := Generate(Options{Framework: SGLang, Dir: dir, Layers: 32, Stage: StagePrefill, TargetBytes: 200 << 20, Gzip: gz, Seed: int64(i)})
				if err != nil {
					b.Fatal(err)
				}
				total += m.Files[0].UncompressedBytes
			}
			b.SetBytes(total / int64(b.N))
			b.ReportMetric(float64(total)/1e6/b.Elapsed().Seconds(), "MB/s")
		})
	}
}
