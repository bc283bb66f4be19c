package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/analysis"
)

// cpuTrace writes a hand-made decode trace: steps ProfilerStep#0..n-1,
// each 1 ms apart, with the same four kernels on stream 7 of device 0,
// launched one after another by one CPU thread. Launch call i of a step
// starts at the step's start + i x (launchNS + 1 µs) and lasts launchNS;
// its kernel starts 5 µs after the call began (the GPU takes the work
// before the call returns), or when the kernel before it ends, whichever
// is later. Kernel durations depend on the kernel and the step only, so
// two traces differing in launchNS run the same GPU work. It returns the
// file's path and, per step, the expected GPU window, busy time and
// host-bound idle (every gap is host-bound here: the next launch began
// after the GPU went idle, or there is no gap).
func cpuTrace(t *testing.T, dir string, steps int, launchNS int64) (windows, busy, hostBound []int64) {
	t.Helper()
	us := func(ns int64) string { return fmt.Sprintf("%d.%03d", ns/1000, ns%1000) }
	var ev []string
	corr := 0
	for s := range steps {
		t0 := int64(1_000_000) + int64(s)*1_000_000
		ev = append(ev, fmt.Sprintf(`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":%s,"dur":%s}`,
			s, us(t0), us(900_000)))
		var gpuEnd, first, b, host int64
		for i := range 4 {
			corr++
			ts := t0 + int64(i)*(launchNS+1000)
			dur := int64(20_000 + 1000*i + 37*(s%5))
			start := max(ts+5000, gpuEnd)
			if i == 0 {
				first = start
			} else if start > gpuEnd {
				if ts <= gpuEnd {
					t.Fatalf("fixture: gap at step %d kernel %d is not host-bound", s, i)
				}
				host += start - gpuEnd
			}
			ev = append(ev,
				fmt.Sprintf(`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%s,"dur":%s,"args":{"correlation":%d}}`,
					us(ts), us(launchNS), corr),
				fmt.Sprintf(`{"ph":"X","cat":"kernel","name":"kernel_%c<float>","pid":0,"tid":7,"ts":%s,"dur":%s,"args":{"device":0,"stream":7,"correlation":%d}}`,
					'a'+i, us(start), us(dur), corr))
			gpuEnd = start + dur
			b += dur
		}
		windows, busy, hostBound = append(windows, gpuEnd-first), append(busy, b), append(hostBound, host)
	}
	text := `{"traceEvents":[` + strings.Join(ev, ",\n") + "]}\n"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "1751650000.1234567-TP-0-DECODE.trace.json"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return windows, busy, hostBound
}

// TestCompareCPUSlowed (issue 37): two runs of the same GPU work, the
// candidate's launch calls 40 µs instead of 5: the step time regresses,
// the decomposition puts the delta in host-bound idle exactly (the mean
// per step of the hand-computed gaps), and no kernel is a regression.
func TestCompareCPUSlowed(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	const steps = 12
	bw, bb, bh := cpuTrace(t, filepath.Join(root, "cpu-base"), steps, 5_000)
	cw, cb, ch := cpuTrace(t, filepath.Join(root, "cpu-slow"), steps, 40_000)
	// one ingest of both runs, each labelled by its directory
	db := filepath.Join(t.TempDir(), "w.duckdb")
	if code, _, stderr := runCmd(t, "--db", db, "ingest", root); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, stderr)
	}
	// the compare, built once by the command's steps and printed as JSON
	// and text by its print step
	printAs := builtReport(t, db, "compare", "cpu-base", "cpu-slow")
	var r analysis.CompareReport
	if out := printAs("json", "", -1); json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("compare JSON: %s", out)
	}
	if len(r.Stages) != 1 || r.Stages[0].Stage != "decode" {
		t.Fatalf("stages %+v", r.Stages)
	}
	st := r.Stages[0]
	// Edge steps (the first and the last) are left out.
	mean := func(xs []int64) float64 {
		var s int64
		for _, x := range xs[1 : len(xs)-1] {
			s += x
		}
		return float64(s) / float64(len(xs)-2)
	}
	for i := range bb {
		if bb[i] != cb[i] || bh[i] != 0 || bw[i] != bb[i] || ch[i] == 0 || cw[i] != cb[i]+ch[i] {
			t.Fatalf("fixture step %d: base %d/%d/%d, candidate %d/%d/%d", i, bw[i], bb[i], bh[i], cw[i], cb[i], ch[i])
		}
	}
	parts := map[string]analysis.CompareDecomp{}
	for _, p := range st.Decomposition {
		parts[p.Part] = p
	}
	host := parts[analysis.PartIdlePrefix+"host_bound"]
	if want := int64(mean(ch) + 0.5); st.Decomposition[0].Part != analysis.PartIdlePrefix+"host_bound" ||
		host.DeltaNS != want || host.BaseNS != 0 || host.CandNS != want {
		t.Errorf("decomposition %+v: want host-bound idle first, %d ns per step", st.Decomposition, want)
	}
	if want := int64(mean(cw) - mean(bw) + 0.5); st.StepDeltaNS != want {
		t.Errorf("step delta %d, want %d", st.StepDeltaNS, want)
	}
	for _, p := range st.Decomposition {
		if strings.HasPrefix(p.Part, "family:") && p.DeltaNS != 0 {
			t.Errorf("kernel time moved: %+v", p)
		}
	}
	for _, k := range st.Kernels {
		if k.Verdict != "" {
			t.Errorf("kernel %s: verdict %q, want none (the kernels are the same)", k.Kernel, k.Verdict)
		}
	}
	if st.Summary[0].Metric != "step time" || st.Summary[0].Verdict != analysis.VerdictRegression {
		t.Errorf("step time: %+v, want a regression", st.Summary[0])
	}
	// The text names the cause.
	if out := printAs("table", "", -1); !strings.Contains(out, "idle: host-bound") {
		t.Errorf("text does not name host-bound idle:\n%s", out)
	}
}
