package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/synth"
)

// playRole lets the test binary be the other process of subprocess tests
// (the tracehouse binary itself, a writer holding the warehouse, an ingest
// killed mid-load); TestMain runs it first. Not from init: DuckDB calls Go
// from its own threads (schema.InsertRows), and the Go runtime holds such
// calls until package initialization is over, so an ingest run from init
// waited for itself.
func playRole() {
	switch os.Getenv("TRACEHOUSE_TEST_ROLE") {
	case "main":
		io := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
		os.Exit(run(os.Args[1:], io, os.Getenv))
	case "hold":
		// Hold the warehouse open for writing (read-only with
		// TRACEHOUSE_HOLD_READ=1) until stdin closes.
		w, err := schema.Open(context.Background(), os.Getenv("TRACEHOUSE_DB"), schema.Options{ReadOnly: os.Getenv("TRACEHOUSE_HOLD_READ") == "1"})
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("ready\n")
		bufio.NewReader(os.Stdin).ReadString('\n')
		w.Close()
		os.Exit(0)
	case "ingest-and-hold":
		// Ingest TRACEHOUSE_INGEST with one job; once TRACEHOUSE_HOLD_AT
		// bytes of trace have been read, say "holding" and read no more:
		// the file being loaded stays in its open transaction (rows
		// appended, nothing committed) until the process is killed.
		at, err := strconv.ParseInt(os.Getenv("TRACEHOUSE_HOLD_AT"), 10, 64)
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		ctx := context.Background()
		w, err := schema.Open(ctx, os.Getenv("TRACEHOUSE_DB"), schema.Options{})
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		_, err = ingest.Ingest(ctx, w, []string{os.Getenv("TRACEHOUSE_INGEST")}, ingest.Options{Jobs: 1, Progress: &holdAt{at: at}})
		os.Stdout.WriteString(fmt.Sprintf("finished without holding: %v\n", err))
		os.Exit(1)
	}
}

// holdAt is an ingest progress that stops the reader for good once `at`
// bytes have been read.
type holdAt struct {
	at   int64
	read atomic.Int64
}

func (h *holdAt) Start(int64) {}

func (h *holdAt) Add(n int64) {
	if h.read.Add(n) >= h.at {
		os.Stdout.WriteString("holding\n")
		for {
			time.Sleep(time.Hour)
		}
	}
}

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	io, out, errOut := testIO("")
	code = run(args, io, testEnv)
	return code, out.String(), errOut.String()
}

// TestIngestDemoThenRuns: `ingest` of the demo into a copy of the demo
// warehouse (the demo ingested, as `triage testdata/demo` stores it:
// TestTriageEndToEnd/Ingest checks its "ingested 16 file(s)") finds every
// file there; runs lists every run; the same content under another path
// is one trace; sql reads with typed JSON. (A fresh `ingest DIR` storing
// every file: TestLakeEndToEnd's of the demo into a lake, whose every
// table then holds the warehouse's rows; the TestDiskFull* re-runs.)
func TestIngestDemoThenRuns(t *testing.T) {
	t.Parallel()
	db := demoCopy(t)
	code, _, stderr := runCmd(t, "--db", db, "ingest", "../../testdata/demo")
	if code != 0 || !strings.Contains(stderr, "ingested 0 file(s)") || !strings.Contains(stderr, "16 already ingested") {
		t.Fatalf("re-ingest exit %d: %q", code, stderr)
	}
	code, out, stderr := runCmd(t, "--db", db, "--format", "json", "runs")
	if code != 0 {
		t.Fatalf("runs exit %d: %s", code, stderr)
	}
	var runs []map[string]any
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range runs {
		labels = append(labels, r["label"].(string))
		var keys []string
		for k := range r {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		want := []string{"framework", "gpu_events", "ingested_at", "label", "model", "ranks", "run_id", "source_formats", "stages", "tags", "traces"}
		if !reflect.DeepEqual(keys, want) {
			t.Fatalf("runs JSON keys %v, want %v", keys, want)
		}
	}
	sort.Strings(labels)
	want := []string{"sglang-formal", "sglang-llama", "sglang-mapping", "tokenspeed-deepseek", "trtllm-llama", "vllm-qwen-moe"}
	if !reflect.DeepEqual(labels, want) {
		t.Errorf("runs %v, want %v", labels, want)
	}
	// The same content under another path is one trace.
	dup := filepath.Join(t.TempDir(), "copy.trace.json")
	b, err := os.ReadFile("../../testdata/demo/trtllm-llama/trace.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dup, b, 0o644)
	code, _, stderr = runCmd(t, "--db", db, "ingest", dup)
	if code != 0 || !strings.Contains(stderr, "1 already ingested") {
		t.Fatalf("duplicate content: exit %d %q", code, stderr)
	}
	// sql reads, with typed JSON.
	code, out, _ = runCmd(t, "--db", db, "--format", "json", "sql", "SELECT count(*) AS n, sum(dur_ns) AS ns FROM kernels")
	var rows []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || rows[0]["n"].(float64) != 3827 {
		t.Fatalf("sql: exit %d %s", code, out)
	}
}

// TestIngestBadInputExitsNonZero: every damaged file of testdata/bad fails
// with one line and no panic, the non-traces do not, and the good trace
// given beside them (the demo's trtllm-llama) is stored alone of them. (The
// ingest is badInput's, with other tests' files in other directories.)
func TestIngestBadInputExitsNonZero(t *testing.T) {
	t.Parallel()
	b := badInputOnce(t)
	stderr := strings.Join(b.lines, "\n")
	if b.code != 1 {
		t.Fatalf("exit %d, want 1: %s", b.code, stderr)
	}
	var errs int
	for _, l := range b.lines {
		if strings.HasPrefix(l, "error: ../../testdata/bad/") {
			errs++
		}
		if strings.Contains(l, "goroutine") || strings.Contains(l, "panic") {
			t.Fatalf("panic output: %s", stderr)
		}
	}
	// Every damaged file of testdata/bad fails; the non-traces do not.
	if errs != 18 {
		t.Errorf("%d error lines, want 18:\n%s", errs, stderr)
	}
	if !strings.Contains(stderr, "chakra_rank0.json: not a trace") || !strings.Contains(stderr, badInputSummary) {
		t.Errorf("stderr: %s", stderr)
	}
	b.checkLines(t)
	// Of testdata/bad and trtllm-llama, the one trace of trtllm-llama is
	// stored (the other runs are the other tests' directories).
	if want := "traces,runs,names\n5,counted:3 traces:1 trtllm-llama:1,"; !strings.HasPrefix(b.stored, want) {
		t.Errorf("stored: %q, want it to start %q", b.stored, want)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"ingest"},
		{"ingest", "--stage", "bogus", "x"},
		{"ingest", "--tag", "novalue", "x"},
		{"nosuchcommand"},
		{"runs", "--bogus-flag"},
		{"--format", "yaml", "runs"},
	} {
		code, _, stderr := runCmd(t, append([]string{"--db", filepath.Join(t.TempDir(), "w.duckdb")}, args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
	code, _, stderr := runCmd(t, "--db", filepath.Join(t.TempDir(), "w.duckdb"), "ingest", "does-not-exist")
	if code != 1 || !strings.Contains(stderr, "does-not-exist: no such file or directory") {
		t.Errorf("missing path: exit %d %q", code, stderr)
	}
	empty := t.TempDir()
	code, _, stderr = runCmd(t, "--db", filepath.Join(t.TempDir(), "w.duckdb"), "ingest", empty)
	if code != 1 || !strings.Contains(stderr, "no trace files") {
		t.Errorf("empty dir: exit %d %q", code, stderr)
	}
}

func TestSecondWriterGetsLockError(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "w.duckdb")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TRACEHOUSE_TEST_ROLE=hold", "TRACEHOUSE_DB="+db)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("holder: %q", line)
	}
	code, _, stderr := runCmd(t, "--db", db, "ingest", "../../testdata/demo/trtllm-llama")
	if code != 1 || !strings.Contains(stderr, "is locked by another tracehouse process") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d: %q", code, stderr)
	}
}

// TestKilledIngestLeavesConsistentWarehouse kills an ingest of several
// traces in the middle of loading one (the child holds there and says so),
// twice, each time checking that every stored trace is whole, nothing else
// is stored and the kill fell where it was meant to; then the ingest
// re-runs and completes.
func TestKilledIngestLeavesConsistentWarehouse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m, err := synth.Generate(synth.Options{Framework: "vllm", Dir: dir, Run: "r", Ranks: 4, TargetBytes: 4 << 20, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	// Ingest loads files in path order.
	var size []int64
	paths := make([]string, len(m.Files))
	for i, f := range m.Files {
		paths[i] = f.Path
	}
	sort.Strings(paths)
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		size = append(size, fi.Size())
	}
	db := filepath.Join(t.TempDir(), "w.duckdb")
	// Attempt k finds k-1 files stored, loads file k-1 whole (committed) and
	// is killed half-way through file k.
	for k := 1; k <= 2; k++ {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "TRACEHOUSE_TEST_ROLE=ingest-and-hold", "TRACEHOUSE_DB="+db,
			"TRACEHOUSE_INGEST="+dir, fmt.Sprintf("TRACEHOUSE_HOLD_AT=%d", size[k-1]+size[k]/2))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if line != "holding\n" {
			t.Fatalf("attempt %d: the child was not holding mid-load when killed, so the kill tested nothing: %q", k, line)
		}
		if n := checkConsistent(t, db, k); n != k {
			t.Fatalf("attempt %d: %d whole traces after the kill, want %d (the one before the file being loaded)", k, n, k)
		}
	}
	code, _, stderr := runCmd(t, "--db", db, "ingest", dir)
	if code != 0 {
		t.Fatalf("re-run: exit %d %s", code, stderr)
	}
	n := checkConsistent(t, db, 99)
	if n != len(m.Files) {
		t.Fatalf("%d traces after the re-run, want %d", n, len(m.Files))
	}
}

// checkConsistent returns the number of traces; it fails on any row of a
// trace that is not stored, or a trace whose rows are not all there.
func checkConsistent(t *testing.T, db string, attempt int) int {
	t.Helper()
	ctx := context.Background()
	w, err := schema.Open(ctx, db, schema.Options{})
	if err != nil {
		t.Fatalf("attempt %d: reopen: %v", attempt, err)
	}
	defer w.Close()
	var traces, orphans, short int
	q := `SELECT (SELECT count(*) FROM traces),
	  (SELECT count(*) FROM kernels WHERE trace_id NOT IN (SELECT trace_id FROM traces))
	+ (SELECT count(*) FROM launches WHERE trace_id NOT IN (SELECT trace_id FROM traces))
	+ (SELECT count(*) FROM py_frame_events WHERE trace_id NOT IN (SELECT trace_id FROM traces)),
	  (SELECT count(*) FROM traces t WHERE kernel_events + memcpy_events + memset_events
	     <> (SELECT count(*) FROM kernels k WHERE k.trace_id = t.trace_id)
	   OR py_frame_events <> (SELECT count(*) FROM py_frame_events f WHERE f.trace_id = t.trace_id))`
	if err := w.DB.QueryRowContext(ctx, q).Scan(&traces, &orphans, &short); err != nil {
		t.Fatal(err)
	}
	if orphans != 0 || short != 0 {
		t.Fatalf("attempt %d: %d traces, %d orphan rows, %d incomplete traces", attempt, traces, orphans, short)
	}
	t.Logf("attempt %d: %d whole traces", attempt, traces)
	return traces
}

// writeCopies writes TestSameContentTwiceInOneIngest's two copies of one
// trace into dir: the demo's trtllm-llama trace with two newlines more
// (other content than the file and than TestOutOfRangeValuesNeverPoison's
// copy, stored before them in badInput's warehouse).
func writeCopies(dir string) error {
	b, err := os.ReadFile("../../testdata/demo/trtllm-llama/trace.json")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, n := range []string{"a.trace.json", "b.trace.json"} {
		if err := os.WriteFile(filepath.Join(dir, n), append(b, "\n\n"...), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// TestSameContentTwiceInOneIngest: two copies of one trace given together
// (loaded on parallel connections) land once, the other is "already
// ingested". (The ingest is badInput's next one: the copies first, with
// two jobs, then TestNsysIngestThenRuns' export; run copies holds one
// trace: TestNsysIngestThenRuns' runs.)
func TestSameContentTwiceInOneIngest(t *testing.T) {
	t.Parallel()
	b := badInputOnce(t)
	if b.nextCode != 0 || !strings.Contains(b.nextErr, "ingested 2 file(s)") || !strings.Contains(b.nextErr, "1 already ingested") {
		t.Fatalf("exit %d: %q", b.nextCode, b.nextErr)
	}
}
