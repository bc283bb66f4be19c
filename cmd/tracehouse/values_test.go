package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/nsys/nsystest"
)

// TestOutOfRangeValuesNeverPoison (issue 36 A): the three values (a
// JSON kernel "dur": 9000000000000000, an Nsight kernel end=INT64_MAX, an
// Nsight deviceId=-5) are refused at ingest, one line each; the good trace
// beside them is stored, and the next ingest and the reports of both runs
// work. Before, they were stored and every later ingest of any run exited 1
// ("save overlap of run(s) [1 2]: ... Out of Range Error", "Conversion
// Error ... rank").
func TestOutOfRangeValuesNeverPoison(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "traces")
	b, err := os.ReadFile("../../testdata/demo/trtllm-llama/trace.json")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "good.trace.json"), b, 0o644)
	os.WriteFile(filepath.Join(src, "dur.trace.json"), []byte(`{"traceEvents": [
{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1712345678901123,"dur":9000000000000000,"args":{"device":0,"stream":7}}]}`), 0o644)
	nsysOne := func(name string, k nsystest.Kernel) {
		w, err := nsystest.Create(filepath.Join(src, name), nsystest.Recent)
		if err != nil {
			t.Fatal(err)
		}
		w.Info(nsystest.Info{SessionStartNS: 1_751_289_296_000_000_000, Devices: []nsystest.Device{{ID: 0, Name: "GPU"}}})
		w.Kernel(k)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	nsysOne("end.sqlite", nsystest.Kernel{Name: "k", Start: 100, End: math.MaxInt64, Stream: 7, PID: 1})
	nsysOne("device.sqlite", nsystest.Kernel{Name: "k", Start: 100, End: 200, Device: -5, Stream: 7, PID: 1})
	db := filepath.Join(dir, "w.duckdb")
	code, _, stderr := runCmd(t, "--db", db, "ingest", src)
	if code != 1 {
		t.Fatalf("ingest exit %d, want 1: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	want := []string{
		"error: " + filepath.Join(src, "device.sqlite") + ": CUPTI_ACTIVITY_KIND_KERNEL row 1: deviceId: -5 is outside 0 to 16777215",
		"error: " + filepath.Join(src, "dur.trace.json") + `: field "dur": 9000000000000000000 ns is longer than the warehouse keeps`,
		"error: " + filepath.Join(src, "end.sqlite") + ": CUPTI_ACTIVITY_KIND_KERNEL row 1: end: 9223372036854775807 ns is outside the times the warehouse keeps",
		"ingested 1 file(s) (",
	}
	if len(lines) != len(want) {
		t.Fatalf("stderr:\n%s\nwant %d lines", stderr, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q\nwant it to start %q", i+1, lines[i], w)
		}
	}
	if !strings.HasSuffix(lines[3], ", 3 failed") {
		t.Errorf("summary %q", lines[3])
	}
	code, _, stderr = runCmd(t, "--db", db, "ingest", "../../testdata/demo/tokenspeed-deepseek")
	if code != 0 {
		t.Fatalf("next ingest exit %d: %s", code, stderr)
	}
	for _, run := range []string{"traces", "tokenspeed-deepseek"} {
		if code, _, stderr := runCmd(t, "--db", db, "triage", run); code != 0 {
			t.Errorf("triage %s exit %d: %s", run, code, stderr)
		}
	}
}
