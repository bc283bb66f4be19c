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

// TestBadFilesFailAloneAndCounted (issue 36 C): in one directory, a rank
// beyond int32 in a file name (TP-4294967297) and in distributedInfo.rank
// (4294967296), an Nsight kernel start written beyond 64 bits (SQLite keeps
// it as a REAL) and one that overflows once the session start is added each
// fail alone with one positioned line; a kernel name that is not UTF-8, in
// JSON and in an export's StringIds, is repaired and stored. The summary
// counts what the warehouse holds, and the next ingest succeeds. Before,
// these were a failure of the whole ingest ("0 of 4", "store names: flush
// kernel_names: ... NOT NULL constraint failed", no file named).
func TestBadFilesFailAloneAndCounted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "traces")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	trace := func(name, meta, kernel string) {
		t.Helper()
		s := `{"traceEvents": [
{"ph":"X","cat":"kernel","name":"` + kernel + `","pid":0,"tid":7,"ts":1712345678901123,"dur":5,"args":{"device":0,"stream":7}}]` + meta + `}`
		if err := os.WriteFile(filepath.Join(src, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	trace("good.trace.json", "", "good")
	trace("utf8.trace.json", "", "bad\xffname")
	trace("1751664424-TP-4294967297.trace.json", "", "tp")
	trace("rank.trace.json", `, "distributedInfo": {"rank": 4294967296}`, "rank")
	const session = 1_751_289_296_000_000_000
	nsysOne := func(name, kernel string, start, end int64, bend string) {
		t.Helper()
		w, err := nsystest.Create(filepath.Join(src, name), nsystest.Recent)
		if err != nil {
			t.Fatal(err)
		}
		w.Info(nsystest.Info{SessionStartNS: session, Devices: []nsystest.Device{{ID: 0, Name: "GPU"}}})
		w.Kernel(nsystest.Kernel{Name: kernel, Start: start, End: end, Stream: 7, PID: 1})
		if bend != "" {
			w.Exec(bend)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	nsysOne("utf8.sqlite", "nsys\xffkernel", 100, 200, "")
	nsysOne("real.sqlite", "k", 100, 200, `UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 1e19`)
	nsysOne("wrap.sqlite", "k", math.MaxInt64-session+1, math.MaxInt64-session+2, "")
	db := filepath.Join(dir, "w.duckdb")
	code, _, stderr := runCmd(t, "--db", db, "ingest", src)
	if code != 1 {
		t.Fatalf("ingest exit %d, want 1: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	want := []string{
		"error: " + filepath.Join(src, "1751664424-TP-4294967297.trace.json") + `: file name: rank token "TP-4294967297" is outside 0 to 16777215`,
		"error: " + filepath.Join(src, "rank.trace.json") + `: distributedInfo.rank: rank 4294967296 is outside 0 to 16777215`,
		"error: " + filepath.Join(src, "real.sqlite") + ": CUPTI_ACTIVITY_KIND_KERNEL row 1: ",
		"error: " + filepath.Join(src, "wrap.sqlite") + ": CUPTI_ACTIVITY_KIND_KERNEL row 1: start: 7472082740854775808 ns after the session start",
		"ingested 3 file(s) (",
	}
	if len(lines) != len(want) {
		t.Fatalf("stderr:\n%s\nwant %d lines", stderr, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q\nwant it to start %q", i+1, lines[i], w)
		}
	}
	if !strings.HasSuffix(lines[4], ", 4 failed") {
		t.Errorf("summary %q, want 4 failed", lines[4])
	}
	// The summary's count is the warehouse's, and the repaired names are in it.
	code, out, stderr := runCmd(t, "--db", db, "--format", "csv", "sql",
		`SELECT (SELECT count(*) FROM traces) AS traces, (SELECT string_agg(DISTINCT name, ' ' ORDER BY name) FROM kernels JOIN kernel_names USING (name_id)) AS names`)
	if code != 0 {
		t.Fatalf("sql exit %d: %s", code, stderr)
	}
	if want := "traces,names\n3,bad\uFFFDname good nsys\uFFFDkernel\n"; out != want {
		t.Errorf("warehouse:\n%s\nwant\n%s", out, want)
	}
	code, _, stderr = runCmd(t, "--db", db, "ingest", "../../testdata/demo/tokenspeed-deepseek")
	if code != 0 {
		t.Fatalf("next ingest exit %d: %s", code, stderr)
	}
}
