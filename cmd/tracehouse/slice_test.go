package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/tracefile"
)

func TestSliceCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := copyFile(t, "../../testdata/demo/tokenspeed-deepseek/1751664424.1234567-TP-0.trace.json.gz", dir)
	out := filepath.Join(dir, "s.json.gz")
	code, stdout, stderr := runCmd(t, "--format", "json", "slice", in, "-o", out, "--step", "1:3", "--stage", "extend")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	var keys []string
	for k := range res {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{"events", "gpu_end_ns", "gpu_events", "gpu_start_ns", "input", "json_bytes_in", "json_bytes_out",
		"kept_events", "kept_gpu_events", "output", "stage_source", "step_source", "steps"}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("JSON keys %v, want %v", keys, want)
	}
	if res["step_source"] != "gpu step[...]" || res["kept_gpu_events"].(float64) <= 0 ||
		res["kept_gpu_events"].(float64) >= res["gpu_events"].(float64) {
		t.Errorf("result %v", res)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd(t, "slice", in, "-o", out, "--step", "1")
	if code != 1 || !strings.Contains(stderr, "output file exists") {
		t.Errorf("existing output: exit %d %q", code, stderr)
	}
	code, _, stderr = runCmd(t, "slice", in, "-o", filepath.Join(dir, "r.json"), "--rank", "3")
	if code != 1 || stderr != "tracehouse: "+in+": the trace is rank 0, not 3\n" {
		t.Errorf("other rank: exit %d %q", code, stderr)
	}
	if left, _ := os.ReadDir(dir); len(left) != 2 {
		t.Errorf("directory holds %v", left)
	}
}

func TestSliceUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"slice", "t.json", "--step", "1"},
		{"slice", "t.json", "-o", "o.json"},
		{"slice", "t.json", "-o", "t.json", "--step", "1"},
		{"slice", "t.json", "-o", "o.json", "--step", "x"},
		{"slice", "t.json", "-o", "o.json", "--window", "2s:1s"},
		{"slice", "t.json", "-o", "o.json", "--stage", "warmup"},
		{"slice", "t.json", "-o", "o.json", "--stage", "unknown"},
		{"slice", "t.json", "-o", "o.json", "--rank", "-1"},
	} {
		code, _, stderr := runCmd(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
	var got *SliceOptions
	f := &Factory{IO: &IOStreams{}, Getenv: testEnv}
	cmd := newCmdSlice(f, func(o *SliceOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"t.json", "-o", "o.json.gz", "--stage", "extend", "--window", "1ms:", "--step", "2:4", "--rank", "0", "--force"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	s := got.Select
	if got.In != "t.json" || got.Out != "o.json.gz" || s.Stage != "prefill" || s.Window == nil || s.Window.Start != 1_000_000 ||
		*s.Steps != (tracefile.StepRange{First: 2, Last: 4}) || *s.Rank != 0 || !s.Force {
		t.Errorf("options %+v %+v", got, s)
	}
}
