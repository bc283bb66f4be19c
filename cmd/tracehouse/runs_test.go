package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/assemble"
)

// TestRunsRmRename: one run's details, rename, removal (all or nothing),
// and run labels offered by shell completion.
func TestRunsRmRename(t *testing.T) {
	t.Parallel()
	db := llamaCopy(t) // ingest --tag gpu=h100 of sglang-llama and trtllm-llama
	code, out, stderr := runCmd(t, "--db", db, "--format", "json", "runs", "sglang-llama")
	if code != 0 {
		t.Fatalf("runs RUN exit %d: %s", code, stderr)
	}
	var d assemble.RunDetailJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	// The demo's manifest: 4 traces, TP 2 from server_args.json, graphs off.
	if d.Label != "sglang-llama" || d.Framework != "sglang" || len(d.Traces) != 4 || d.TP == nil || *d.TP != 2 ||
		d.CUDAGraph == nil || *d.CUDAGraph || strings.Join(d.Tags, ",") != "gpu=h100" || d.ServerArgsKeys == nil || !d.OverlapSaved {
		t.Errorf("runs sglang-llama: %+v", d)
	}
	var events int64
	for _, tr := range d.Traces {
		events += tr.GPUEvents
	}
	if events != 780 {
		t.Errorf("GPU events over traces = %d, want 780", events)
	}

	if code, _, stderr := runCmd(t, "--db", db, "runs", "nope"); code != 1 || !strings.Contains(stderr, `no run labelled "nope"`) {
		t.Errorf("runs nope: exit %d %q", code, stderr)
	}
	if code, _, _ := runCmd(t, "--db", db, "rm", "trtllm-llama", "nope"); code != 1 {
		t.Errorf("rm with an unknown label: exit %d", code)
	}
	code, out, _ = runCmd(t, "--db", db, "__complete", "rm", "trtllm-llama", "")
	if code != 0 || !strings.HasPrefix(out, "sglang-llama\n:4\n") {
		t.Errorf("completion: %q", out)
	}
	if code, _, stderr := runCmd(t, "--db", db, "rename", "trtllm-llama", "trt-base"); code != 0 {
		t.Fatalf("rename: exit %d %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, "--db", db, "rm", "trt-base"); code != 0 || !strings.Contains(stderr, "removed run trt-base (1 trace(s))") {
		t.Fatalf("rm: exit %d %s", code, stderr)
	}
	code, out, _ = runCmd(t, "--db", db, "--format", "csv", "runs")
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, "sglang-llama") {
		t.Errorf("after rm, runs:\n%s", out)
	}
}
