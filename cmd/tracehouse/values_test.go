package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tracehouse/tracehouse/nsys/nsystest"
)

// badInput is what one ingest of the bad input of three tests, and the
// commands after it, printed: testdata/bad beside the demo's trtllm-llama
// (TestIngestBadInputExitsNonZero), out-of-range values beside a good trace
// in directory "traces" (TestOutOfRangeValuesNeverPoison), files that fail
// alone or are repaired in directory "counted"
// (TestBadFilesFailAloneAndCounted); the next ingest, with two jobs, is of
// TestSameContentTwiceInOneIngest's two copies of one trace (directory
// copies, first in path order: the two loaders take them at once) and
// TestNsysIngestThenRuns' Nsight export (directory nsys-run). Each test
// checks its own files' lines and runs, and that no other line is printed
// (checkLines). One ingest and one next ingest, rather than three and
// three: an ingest's fixed cost is its finish.
type badInput struct {
	oor, counted string // the two directories written (removed once read)
	code         int    // the ingest's exit status
	lines        []string
	// stored: the warehouse's traces, and each run's, as
	// "traces,runs,names" CSV (names: the kernel names of run counted)
	stored string
	// the next ingest (directories copies and nsys-run), then runs in
	// JSON and as a table, and triage of run traces and of nsys-run
	nextCode   int
	nextErr    string
	runsJSON   string
	runsTable  string
	triageCode [2]int
	triageOut  [2]string
	triageErr  [2]string
	err        error // writing the fixture or reading the warehouse
	once       sync.Once
}

var badInputRun badInput

// badInputSummary is the ingest's last line, up to its byte counts, and
// after them: 5 files stored (trtllm-llama, traces' good one, counted's
// good and two repaired names), testdata/bad's chakra_rank0.json skipped,
// 18 + 3 + 4 failed.
const (
	badInputSummary = "ingested 5 file(s) ("
	badInputEnd     = ", 1 skipped, 25 failed"
)

// badInputOnce runs the ingest and the commands after it once per test
// binary.
func badInputOnce(t *testing.T) *badInput {
	t.Helper()
	b := &badInputRun
	b.once.Do(func() { b.err = b.run() })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b
}

func (b *badInput) run() error {
	dir, err := os.MkdirTemp("", "badinput")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b.oor, b.counted = filepath.Join(dir, "traces"), filepath.Join(dir, "counted")
	if err := writeOutOfRange(b.oor); err != nil {
		return err
	}
	if err := writeBadFiles(b.counted); err != nil {
		return err
	}
	nsysRun, err := writeNsysRun(dir)
	if err != nil {
		return err
	}
	copies := filepath.Join(dir, "copies")
	if err := writeCopies(copies); err != nil {
		return err
	}
	db := filepath.Join(dir, "w.duckdb")
	io, _, errOut := testIO("")
	b.code = run([]string{"--db", db, "ingest", "../../testdata/bad", "../../testdata/demo/trtllm-llama", b.oor, b.counted}, io, testEnv)
	b.lines = strings.Split(strings.TrimSpace(errOut.String()), "\n")
	io, out, errOut := testIO("")
	if code := run([]string{"--db", db, "--format", "csv", "sql", `SELECT (SELECT count(*) FROM traces) AS traces,
		(SELECT string_agg(label || ':' || n, ' ' ORDER BY label) FROM (SELECT r.label, count(*) AS n FROM traces JOIN runs r USING (run_id) GROUP BY ALL)) AS runs,
		(SELECT string_agg(DISTINCT name, ' ' ORDER BY name) FROM kernels JOIN kernel_names USING (name_id) JOIN runs r USING (run_id)
		   WHERE r.label = 'counted') AS names`}, io, testEnv); code != 0 {
		return fmt.Errorf("sql: exit %d: %s", code, errOut)
	}
	b.stored = out.String()
	io, _, errOut = testIO("")
	b.nextCode = run([]string{"--db", db, "ingest", "--jobs", "2", copies, nsysRun}, io, testEnv)
	b.nextErr = errOut.String()
	for _, c := range []struct {
		args []string
		out  *string
	}{{[]string{"--format", "json", "runs"}, &b.runsJSON}, {[]string{"runs"}, &b.runsTable}} {
		io, out, errOut := testIO("")
		if code := run(append([]string{"--db", db}, c.args...), io, testEnv); code != 0 {
			return fmt.Errorf("%s: exit %d: %s", c.args, code, errOut)
		}
		*c.out = out.String()
	}
	for i, label := range []string{"traces", "nsys-run"} {
		io, out, errOut := testIO("")
		b.triageCode[i] = run([]string{"--db", db, "triage", label}, io, testEnv)
		b.triageOut[i], b.triageErr[i] = out.String(), errOut.String()
	}
	return nil
}

// linesUnder are the error lines of files under prefix, in order.
func (b *badInput) linesUnder(prefix string) []string {
	var out []string
	for _, l := range b.lines {
		if strings.HasPrefix(l, "error: "+prefix) {
			out = append(out, l)
		}
	}
	return out
}

// checkLines fails unless every line the ingest printed is an error line
// of one of the three tests' files, testdata/bad's note on
// chakra_rank0.json, or the summary, last.
func (b *badInput) checkLines(t *testing.T) {
	t.Helper()
	n := len(b.lines)
	if !strings.HasPrefix(b.lines[n-1], badInputSummary) || !strings.HasSuffix(b.lines[n-1], badInputEnd) {
		t.Errorf("summary %q, want %q...%q", b.lines[n-1], badInputSummary, badInputEnd)
	}
	for _, l := range b.lines[:n-1] {
		if !strings.HasPrefix(l, "error: ../../testdata/bad/") && !strings.HasPrefix(l, "error: "+b.oor+"/") &&
			!strings.HasPrefix(l, "error: "+b.counted+"/") && l != "note: ../../testdata/bad/chakra_rank0.json: not a trace (no traceEvents array), skipped" {
			t.Errorf("line %q is none of the fixtures' (all:\n%s)", l, strings.Join(b.lines, "\n"))
		}
	}
}

// writeOutOfRange writes TestOutOfRangeValuesNeverPoison's files into src:
// a good trace (the demo's trtllm-llama trace with a newline more, other
// content than the file itself, ingested beside it), a JSON kernel "dur":
// 9000000000000000 us, an Nsight kernel end=INT64_MAX and one with
// deviceId=-5.
func writeOutOfRange(src string) error {
	b, err := os.ReadFile("../../testdata/demo/trtllm-llama/trace.json")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(src, "good.trace.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(src, "dur.trace.json"), []byte(`{"traceEvents": [
{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1712345678901123,"dur":9000000000000000,"args":{"device":0,"stream":7}}]}`), 0o644); err != nil {
		return err
	}
	if err := nsysOne(filepath.Join(src, "end.sqlite"), nsystest.Kernel{Name: "k", Start: 100, End: math.MaxInt64, Stream: 7, PID: 1}, ""); err != nil {
		return err
	}
	return nsysOne(filepath.Join(src, "device.sqlite"), nsystest.Kernel{Name: "k", Start: 100, End: 200, Device: -5, Stream: 7, PID: 1}, "")
}

// nsysSession is the session start of the tests' Nsight exports.
const nsysSession = 1_751_289_296_000_000_000

// nsysOne writes an Nsight export at path holding kernel k, then runs bend
// on it (SQL, "" for none).
func nsysOne(path string, k nsystest.Kernel, bend string) error {
	w, err := nsystest.Create(path, nsystest.Recent)
	if err != nil {
		return err
	}
	w.Info(nsystest.Info{SessionStartNS: nsysSession, Devices: []nsystest.Device{{ID: 0, Name: "GPU"}}})
	w.Kernel(k)
	if bend != "" {
		w.Exec(bend)
	}
	return w.Close()
}

// TestOutOfRangeValuesNeverPoison (issue 36 A): the three values (a
// JSON kernel "dur": 9000000000000000, an Nsight kernel end=INT64_MAX, an
// Nsight deviceId=-5) are refused at ingest, one line each; the good trace
// beside them is stored, and the next ingest and the reports of both runs
// work. Before, they were stored and every later ingest of any run exited 1
// ("save overlap of run(s) [1 2]: ... Out of Range Error", "Conversion
// Error ... rank"). (The ingest is badInput's, with other tests' files.)
func TestOutOfRangeValuesNeverPoison(t *testing.T) {
	t.Parallel()
	b := badInputOnce(t)
	if b.code != 1 {
		t.Fatalf("ingest exit %d, want 1:\n%s", b.code, strings.Join(b.lines, "\n"))
	}
	src := b.oor
	want := []string{
		"error: " + filepath.Join(src, "device.sqlite") + ": CUPTI_ACTIVITY_KIND_KERNEL row 1: deviceId: -5 is outside 0 to 16777215",
		"error: " + filepath.Join(src, "dur.trace.json") + `: field "dur": 9000000000000000000 ns is longer than the warehouse keeps`,
		"error: " + filepath.Join(src, "end.sqlite") + ": CUPTI_ACTIVITY_KIND_KERNEL row 1: end: 9223372036854775807 ns is outside the times the warehouse keeps",
	}
	lines := b.linesUnder(src + "/")
	if len(lines) != len(want) {
		t.Fatalf("lines of %s:\n%s\nwant %d", src, strings.Join(lines, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q\nwant it to start %q", i+1, lines[i], w)
		}
	}
	b.checkLines(t)
	// the good trace is stored, in run traces (the runs: badInput.stored)
	if !strings.Contains(b.stored, ",counted:3 traces:1 trtllm-llama:1,") {
		t.Errorf("warehouse:\n%s\nwant run traces with one trace", b.stored)
	}
	if b.nextCode != 0 {
		t.Fatalf("next ingest exit %d: %s", b.nextCode, b.nextErr)
	}
	for i, run := range []string{"traces", "nsys-run"} {
		if b.triageCode[i] != 0 {
			t.Errorf("triage %s exit %d: %s", run, b.triageCode[i], b.triageErr[i])
		}
	}
}

// writeBadFiles writes TestBadFilesFailAloneAndCounted's files into src.
func writeBadFiles(src string) error {
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	trace := func(name, meta, kernel string) error {
		s := `{"traceEvents": [
{"ph":"X","cat":"kernel","name":"` + kernel + `","pid":0,"tid":7,"ts":1712345678901123,"dur":5,"args":{"device":0,"stream":7}}]` + meta + `}`
		return os.WriteFile(filepath.Join(src, name), []byte(s), 0o644)
	}
	for _, err := range []error{
		trace("good.trace.json", "", "good"),
		trace("utf8.trace.json", "", "bad\xffname"),
		trace("1751664424-TP-4294967297.trace.json", "", "tp"),
		trace("rank.trace.json", `, "distributedInfo": {"rank": 4294967296}`, "rank"),
		nsysOne(filepath.Join(src, "utf8.sqlite"), nsystest.Kernel{Name: "nsys\xffkernel", Start: 100, End: 200, Stream: 7, PID: 1}, ""),
		nsysOne(filepath.Join(src, "real.sqlite"), nsystest.Kernel{Name: "k", Start: 100, End: 200, Stream: 7, PID: 1},
			`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 1e19`),
		nsysOne(filepath.Join(src, "wrap.sqlite"), nsystest.Kernel{Name: "k", Start: math.MaxInt64 - nsysSession + 1,
			End: math.MaxInt64 - nsysSession + 2, Stream: 7, PID: 1}, ""),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestBadFilesFailAloneAndCounted (issue 36 C): in one directory, a rank
// beyond int32 in a file name (TP-4294967297) and in distributedInfo.rank
// (4294967296), an Nsight kernel start written beyond 64 bits (SQLite keeps
// it as a REAL) and one that overflows once the session start is added each
// fail alone with one positioned line; a kernel name that is not UTF-8, in
// JSON and in an export's StringIds, is repaired and stored. The summary
// counts what the warehouse holds, and the next ingest succeeds. Before,
// these were a failure of the whole ingest ("0 of 4", "store names: flush
// kernel_names: ... NOT NULL constraint failed", no file named). (The
// ingest is badInput's, with other tests' files.)
func TestBadFilesFailAloneAndCounted(t *testing.T) {
	t.Parallel()
	b := badInputOnce(t)
	if b.code != 1 {
		t.Fatalf("ingest exit %d, want 1:\n%s", b.code, strings.Join(b.lines, "\n"))
	}
	src := b.counted
	want := []string{
		"error: " + filepath.Join(src, "1751664424-TP-4294967297.trace.json") + `: file name: rank token "TP-4294967297" is outside 0 to 16777215`,
		"error: " + filepath.Join(src, "rank.trace.json") + `: distributedInfo.rank: rank 4294967296 is outside 0 to 16777215`,
		"error: " + filepath.Join(src, "real.sqlite") + ": CUPTI_ACTIVITY_KIND_KERNEL row 1: ",
		"error: " + filepath.Join(src, "wrap.sqlite") + ": CUPTI_ACTIVITY_KIND_KERNEL row 1: start: 7472082740854775808 ns after the session start",
	}
	lines := b.linesUnder(src + "/")
	if len(lines) != len(want) {
		t.Fatalf("lines of %s:\n%s\nwant %d", src, strings.Join(lines, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q\nwant it to start %q", i+1, lines[i], w)
		}
	}
	b.checkLines(t)
	// The summary's count (5) is the warehouse's, three of them this
	// directory's, and the repaired names are in it.
	if want := "traces,runs,names\n5,counted:3 traces:1 trtllm-llama:1,bad\uFFFDname good nsys\uFFFDkernel\n"; b.stored != want {
		t.Errorf("warehouse:\n%s\nwant\n%s", b.stored, want)
	}
	if b.nextCode != 0 {
		t.Fatalf("next ingest exit %d: %s", b.nextCode, b.nextErr)
	}
}
