package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/assemble"
	"github.com/tracehouse/tracehouse/synth"
)

// TestRunsStagesAreTheKernels: the Stages of `runs` are the stages of the
// run's GPU events, as triage sections them, not the traces' file-level
// stage (a vLLM or TokenSpeed trace with prefill and decode steps is
// "mixed" as a file); the expected sets come from the demo's manifest. And
// a two-rank vLLM run's framework evidence names each kind of evidence
// once, not once per file.
func TestRunsStagesAreTheKernels(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(demoDir, "MANIFEST.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m synth.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]bool{}
	for _, f := range m.Files {
		run := strings.Split(filepath.ToSlash(f.Path), "/")[0]
		if want[run] == nil {
			want[run] = map[string]bool{}
		}
		for st, tot := range f.StageGPU {
			if tot.Count > 0 {
				want[run][st] = true
			}
		}
	}

	db := demoCopy(t)
	code, out, stderr := runCmd(t, "--db", db, "--format", "json", "runs")
	if code != 0 {
		t.Fatalf("runs: exit %d: %s", code, stderr)
	}
	var runs []runJSON
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(want) {
		t.Errorf("%d runs, manifest has %d", len(runs), len(want))
	}
	for _, r := range runs {
		var ws []string
		for st := range want[r.Label] {
			ws = append(ws, st)
		}
		sort.Strings(ws)
		if !reflect.DeepEqual(r.Stages, ws) {
			t.Errorf("run %s: stages %v, want %v", r.Label, r.Stages, ws)
		}
	}

	code, out, stderr = runCmd(t, "--db", db, "--format", "json", "runs", "vllm-qwen-moe")
	if code != 0 {
		t.Fatalf("runs vllm-qwen-moe: exit %d: %s", code, stderr)
	}
	var d assemble.RunDetailJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	ev := d.FrameworkEvidence
	if !strings.HasPrefix(ev, "2 file names fit vllm; Python frames in vllm code (") || strings.Count(ev, "vllm code") != 1 {
		t.Errorf("vllm-qwen-moe evidence %q: want each kind once, the two file names counted", ev)
	}
}
