package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func copyFile(t *testing.T, src, dir string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestPerfettoFixCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The TensorRT-LLM demo trace has PDL overlaps on one stream.
	in := copyFile(t, "../../testdata/demo/trtllm-llama/trace.json", dir)
	code, out, stderr := runCmd(t, "--format", "json", "perfetto-fix", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var keys []string
	for k := range res {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{"added_lanes", "bad_numbers", "control_chars", "events", "gpu_events", "input", "json_bytes_in",
		"json_bytes_out", "lanes", "max_depth", "moved_events", "moved_flows", "output", "split_lanes", "string_times", "unrepairable"}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("JSON keys %v, want %v", keys, want)
	}
	def := filepath.Join(dir, "trace.perfetto.json.gz")
	if res["output"] != def || res["split_lanes"].(float64) < 1 || res["moved_events"].(float64) < 1 {
		t.Errorf("result %v", res)
	}
	if _, err := os.Stat(def); err != nil {
		t.Fatal(err)
	}
	// Again: the output exists.
	code, _, stderr = runCmd(t, "perfetto-fix", in)
	if code != 1 || !strings.Contains(stderr, "output file exists (use --force to overwrite)") {
		t.Errorf("second run: exit %d %q", code, stderr)
	}
	code, out, stderr = runCmd(t, "perfetto-fix", "--force", in)
	if code != 0 || !strings.HasPrefix(out, "wrote "+def+": 842 events") || !strings.Contains(out, "overlaps: 1 lane(s) spread over 1 added lane(s)") {
		t.Errorf("--force: exit %d %q %q", code, out, stderr)
	}
}

func TestPerfettoFixBadInput(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"truncated-gzip.trace.json.gz", "gzip-of-garbage.trace.json.gz", "truncated.trace.json", "stray-brace.trace.json"} {
		dir := t.TempDir()
		in := copyFile(t, "../../testdata/bad/"+name, dir)
		for _, args := range [][]string{{"perfetto-fix", in}, {"slice", in, "-o", filepath.Join(dir, "s.json.gz"), "--step", "0"}} {
			code, out, stderr := runCmd(t, args...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != 1 || out != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "tracehouse: "+in+": ") {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q", args[0], name, code, out, stderr)
			}
			if left, _ := os.ReadDir(dir); len(left) != 1 {
				t.Errorf("%s %s: left behind %v", args[0], name, left)
			}
		}
	}
}

func TestPerfettoFixUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "t.json")
	for _, args := range [][]string{
		{"perfetto-fix"},
		{"perfetto-fix", in, in},
		{"perfetto-fix", in, "-o", in},
		{"perfetto-fix", "--format", "yaml", in},
	} {
		code, _, stderr := runCmd(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
	// Flags are parsed before the run function, with the default output.
	var got *PerfettoFixOptions
	f := &Factory{IO: &IOStreams{}, Getenv: testEnv}
	cmd := newCmdPerfettoFix(f, func(o *PerfettoFixOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--force", in})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.In != in || got.Out != filepath.Join(dir, "t.perfetto.json.gz") || !got.Force {
		t.Errorf("options %+v", got)
	}
}

// TestPerfettoFixSweepsKilledTemp: the temporary file a killed
// perfetto-fix left beside its output (named after its pid) is removed by
// the next run writing that output; a live process's stays.
func TestPerfettoFixSweepsKilledTemp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := copyFile(t, "../../testdata/demo/trtllm-llama/trace.json", dir)
	out := filepath.Join(dir, "fixed.json")
	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	killed := filepath.Join(dir, fmt.Sprintf(".fixed.json.tmp-%d-123", dead.Process.Pid))
	live := filepath.Join(dir, fmt.Sprintf(".fixed.json.tmp-%d-456", os.Getpid()))
	for _, p := range []string{killed, live} {
		if err := os.WriteFile(p, []byte(`{"traceEvents": [`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, stderr := runCmd(t, "perfetto-fix", "-o", out, in); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Errorf("the killed run's temporary file is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's temporary file: %v", err)
	}
}
