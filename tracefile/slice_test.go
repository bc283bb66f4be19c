package tracefile

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stepTrace is a small SGLang-style trace: three steps (EXTEND, DECODE,
// DECODE), each with a CPU step annotation, a Python frame, a cpu_op, a
// launch, a kernel on the GPU inside a GPU step annotation, and an ac2g flow
// from launch to kernel. Times are µs; step s runs on the CPU at
// [200s, 200s+100) and on the GPU at [200s+50, 200s+150).
func stepTrace(gpuAnnotations bool) []string {
	ev := []string{
		`{"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python"}}`,
		`{"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}}`,
		`{"ph": "X", "cat": "python_function", "name": "serve.py(1): run", "pid": 100, "tid": 1, "ts": 0, "dur": 600}`,
	}
	stages := []string{"EXTEND bs=1 tokens=16", "DECODE bs=1 tokens=1", "DECODE bs=1 tokens=1"}
	for s, st := range stages {
		c, g := 200*s, 200*s+50
		k := s + 1
		ev = append(ev,
			fmt.Sprintf(`{"ph": "X", "cat": "user_annotation", "name": "step[%s]", "pid": 100, "tid": 1, "ts": %d, "dur": 100}`, st, c),
			fmt.Sprintf(`{"ph": "X", "cat": "python_function", "name": "model.py(9): forward", "pid": 100, "tid": 1, "ts": %d, "dur": 80}`, c+5),
			fmt.Sprintf(`{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 1, "ts": %d, "dur": 20, "args": {"External id": %d}}`, c+10, k),
			fmt.Sprintf(`{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 1, "ts": %d, "dur": 5, "args": {"correlation": %d, "External id": %d}}`, c+12, 10+k, k),
			fmt.Sprintf(`{"ph": "s", "cat": "ac2g", "name": "ac2g", "id": %d, "pid": 100, "tid": 1, "ts": %d}`, 10+k, c+12),
			fmt.Sprintf(`{"ph": "X", "cat": "kernel", "name": "gemm_%d", "pid": 0, "tid": 7, "ts": %d, "dur": 40, "args": {"device": 0, "stream": 7, "correlation": %d, "External id": %d}}`, k, g+10, 10+k, k),
			fmt.Sprintf(`{"ph": "f", "cat": "ac2g", "name": "ac2g", "id": %d, "pid": 0, "tid": 7, "ts": %d, "bp": "e"}`, 10+k, g+10),
			fmt.Sprintf(`{"ph": "i", "name": "mark", "pid": 100, "tid": 1, "ts": %d, "s": "t"}`, c+50),
		)
		if gpuAnnotations {
			ev = append(ev, fmt.Sprintf(`{"ph": "X", "cat": "gpu_user_annotation", "name": "step[%s]", "pid": 0, "tid": 7, "ts": %d, "dur": 100, "args": {"device": 0}}`, st, g))
		}
	}
	return ev
}

func slice(t *testing.T, in string, opt SliceOptions) (string, *SliceResult) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "slice.json")
	res, err := Slice(context.Background(), in, out, opt)
	if err != nil {
		t.Fatal(err)
	}
	return out, res
}

// names lists the output's events as ph:name, in order.
func names(t *testing.T, path string) []string {
	t.Helper()
	_, evs := readOutput(t, path)
	var out []string
	for _, e := range evs {
		out = append(out, fmt.Sprint(e["ph"], ":", e["name"]))
	}
	return out
}

func TestSliceByStep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := writeTrace(t, dir, "t.json", stepTrace(true), `, "baseTimeNanoseconds": 1000`)
	out, res := slice(t, in, SliceOptions{Steps: &StepRange{1, 1}})
	got := names(t, out)
	want := []string{
		"M:process_name", "M:thread_name",
		"X:serve.py(1): run",
		// Step 1's CPU side: the annotation and frame around the launch.
		"X:step[DECODE bs=1 tokens=1]", "X:model.py(9): forward", "X:aten::mm", "X:cudaLaunchKernel", "s:ac2g",
		"X:gemm_2", "f:ac2g", "i:mark",
		"X:step[DECODE bs=1 tokens=1]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("kept:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.KeptGPU != 1 || res.GPUEvents != 3 || res.Steps != 3 || res.StepSource != "gpu step[...]" || res.Kept != int64(len(want)) {
		t.Errorf("result %+v", res)
	}
	top, _ := readOutput(t, out)
	if string(top["baseTimeNanoseconds"]) != "1000" {
		t.Errorf("top-level keys not kept: %v", top)
	}
	// Without GPU annotations, the CPU step windows select through launches.
	in2 := writeTrace(t, dir, "t2.json", stepTrace(false), "")
	out2, res2 := slice(t, in2, SliceOptions{Steps: &StepRange{1, 2}})
	var kernels []string
	for _, n := range names(t, out2) {
		if strings.HasPrefix(n, "X:gemm") {
			kernels = append(kernels, n)
		}
	}
	if !slices.Equal(kernels, []string{"X:gemm_2", "X:gemm_3"}) || res2.StepSource != "cpu step[...]" {
		t.Errorf("cpu steps: %v, %+v", kernels, res2)
	}
}

func TestSliceByStageWindowRank(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := writeTrace(t, dir, "t.json", stepTrace(true), "")
	kernelsOf := func(out string) []string {
		var ks []string
		for _, n := range names(t, out) {
			if strings.HasPrefix(n, "X:gemm") {
				ks = append(ks, strings.TrimPrefix(n, "X:"))
			}
		}
		return ks
	}
	out, res := slice(t, in, SliceOptions{Stage: "decode"})
	if ks := kernelsOf(out); !slices.Equal(ks, []string{"gemm_2", "gemm_3"}) || res.StageSource != "gpu annotations" {
		t.Errorf("decode: %v %+v", ks, res)
	}
	out, _ = slice(t, in, SliceOptions{Stage: "prefill"})
	if ks := kernelsOf(out); !slices.Equal(ks, []string{"gemm_1"}) {
		t.Errorf("prefill: %v", ks)
	}
	// The trace starts at 0: kernels start at 60, 260, 460 µs.
	out, _ = slice(t, in, SliceOptions{Window: &Window{Start: 260_000, End: 460_000}})
	if ks := kernelsOf(out); !slices.Equal(ks, []string{"gemm_2"}) {
		t.Errorf("window: %v", ks)
	}
	out, _ = slice(t, in, SliceOptions{Window: &Window{Start: 100_000, End: math.MaxInt64}, Stage: "decode", Steps: &StepRange{2, 2}})
	if ks := kernelsOf(out); !slices.Equal(ks, []string{"gemm_3"}) {
		t.Errorf("all filters: %v", ks)
	}
	zero := 0
	out, _ = slice(t, in, SliceOptions{Rank: &zero})
	if ks := kernelsOf(out); len(ks) != 3 {
		t.Errorf("rank 0 of a rank-0 trace: %v", ks)
	}
	// Stage from the file name decides for the whole trace.
	in3 := writeTrace(t, dir, "x-TP-1-DECODE.trace.json", stepTrace(true), "")
	out, _ = slice(t, in3, SliceOptions{Stage: "decode"})
	if ks := kernelsOf(out); len(ks) != 3 {
		t.Errorf("file stage: %v", ks)
	}
	one := 1
	for _, c := range []struct {
		opt  SliceOptions
		want string
	}{
		{SliceOptions{Rank: &one}, "the trace is rank 0, not 1"},
		{SliceOptions{Rank: &zero}, ""},
		{SliceOptions{Steps: &StepRange{5, 6}}, "no step 5..6 among 3 gpu step[...] steps"},
		{SliceOptions{Stage: "decode", Window: &Window{Start: 0, End: 100_000}}, "no GPU event matches"},
		{SliceOptions{Stage: "prefill"}, "the trace is rank 1, not 0"},
	} {
		path := in
		if c.want == "the trace is rank 1, not 0" {
			path, c.opt.Rank = in3, &zero
		}
		if c.want == "" {
			continue
		}
		outDir := t.TempDir()
		_, err := Slice(context.Background(), path, filepath.Join(outDir, "o.json"), c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.opt, err, c.want)
		}
		if left, _ := os.ReadDir(outDir); len(left) != 0 {
			t.Errorf("left behind %v", left)
		}
	}
	if _, err := Slice(context.Background(), in, filepath.Join(dir, "o.json"), SliceOptions{Stage: "decode", Window: &Window{Start: 0, End: 100_000}}); !errors.Is(err, ErrNothingSelected) {
		t.Errorf("error %v is not ErrNothingSelected", err)
	}
}

func TestParseWindowAndSteps(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Window{
		"1.5s:2s":       {1_500_000_000, 2_000_000_000},
		"200ms:":        {200_000_000, math.MaxInt64},
		":350us":        {0, 350_000},
		"10:20.5":       {10_000, 20_500},
		"250000ns:1ms":  {250_000, 1_000_000},
		"1.000001s:2µs": {},
	} {
		got, err := ParseWindow(in)
		if want == (Window{}) {
			if err == nil {
				t.Errorf("%s: no error", in)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "1s", "x:1s", "2s:1s", "-1s:"} {
		if _, err := ParseWindow(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	for in, want := range map[string]StepRange{"3": {3, 3}, "2:5": {2, 5}} {
		if got, err := ParseSteps(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "x", "-1", "5:2", "1:"} {
		if _, err := ParseSteps(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzSlice slices arbitrary bytes with an open window (every GPU event
// with a time is selected) and checks: no panic; a failure is one line
// naming the file and leaves no output; a success is a subsequence of the
// input holding every metadata event and every selected GPU event.
func FuzzSlice(f *testing.F) {
	for _, s := range []string{
		`{"traceEvents": [{"ph":"M","name":"thread_name","pid":0,"tid":7,"args":{"name":"s"}},{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1.5,"dur":2,"args":{"correlation":3}},{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":1,"args":{"correlation":3}},{"ph":"s","id":3,"pid":1,"tid":1,"ts":1},{"ph":"f","id":3,"pid":0,"tid":7,"ts":1.5}]}`,
		`[{"ph":"X","cat":"gpu_user_annotation","name":"step[DECODE bs=1]","ts":0,"dur":9},{"ph":"X","cat":"kernel","ts":"1","dur":"3"},{"ph":"i","ts":2}]`,
		`{"traceEvents": [{"ph":"X","cat":"kernel","ts":1,"dur":-1},{"ph":"X","cat":"cpu_op","ts":0,"dur":5,"args":{"External id":1}}], "distributedInfo": {"rank": 0}}`,
		`{"traceEvents": [`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		in := filepath.Join(dir, "in.json")
		os.WriteFile(in, data, 0o644)
		outDir := filepath.Join(dir, "out")
		os.Mkdir(outDir, 0o755)
		out := filepath.Join(outDir, "o.json")
		res, err := Slice(context.Background(), in, out, SliceOptions{Window: &Window{0, math.MaxInt64}})
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, in+": ") {
				t.Fatalf("error is not one line naming the file: %q", msg)
			}
			if left, _ := os.ReadDir(outDir); len(left) != 0 {
				t.Fatalf("left behind %v", left)
			}
			return
		}
		_, want := readTrace(t, in, true)
		_, got := readTrace(t, out, true)
		j, gpu := 0, int64(0)
		for _, w := range want {
			_, selected := gpuSpan(w)
			if w["ph"] == "M" || selected {
				gpu += map[bool]int64{true: 1}[selected]
				if j >= len(got) || !equalJSON(w, got[j]) {
					t.Fatalf("lost %v", w)
				}
			}
			if j < len(got) && equalJSON(w, got[j]) {
				j++
			}
		}
		if j != len(got) {
			t.Fatalf("output is not a subsequence of the input: %d of %d matched", j, len(got))
		}
		if gpu != res.KeptGPU {
			t.Fatalf("kept %d GPU events, want %d", res.KeptGPU, gpu)
		}
	})
}
