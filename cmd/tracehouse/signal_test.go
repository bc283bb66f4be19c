package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tracehouse/tracehouse/aggregates"
)

// TestSIGINTExits130: an interrupted command stops its work and exits 130
// with one line saying so. The query runs for minutes; the signal is sent
// once the child has spent CPU time no start-up spends (so it lands while
// the query runs, however loaded the machine), not after a fixed sleep.
func TestSIGINTExits130(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "--db", ":memory:", "sql", "SELECT sum(hash(i)) FROM range(100000000000) t(i)")
	cmd.Env = append(os.Environ(), "TRACEHOUSE_TEST_ROLE=main", "TRACEHOUSE_THREADS=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitCPU(t, cmd.Process.Pid, 40) // 0.4 s at Linux's 100 ticks a second
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("want exit 130, got %v (stderr %q)", err, stderr.String())
	}
	if !strings.HasPrefix(stderr.String(), "tracehouse: interrupted") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("stderr %q", stderr.String())
	}
	t.Logf("stopped %v after the signal", time.Since(start))
}

// waitCPU waits until process pid has run for ticks clock ticks (user and
// system time, fields 14 and 15 of /proc/PID/stat).
func waitCPU(t *testing.T, pid, ticks int) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatalf("child's CPU time (it ended before %d ticks?): %v", ticks, err)
		}
		// The command name in parentheses may hold spaces; the fields after it do not.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		utime, err1 := strconv.Atoi(f[11])
		stime, err2 := strconv.Atoi(f[12])
		if err1 != nil || err2 != nil {
			t.Fatalf("child's CPU time in %q", b)
		}
		if utime+stime >= ticks {
			return
		}
	}
	t.Fatalf("the child did not reach %d ticks of CPU time in 2 minutes", ticks)
}

// TestSIGINTDuringCommitCountsWhatIsStored (issue 36, faults 1): SIGINT
// while a file's COMMIT writes DuckDB's checkpoint (its write-ahead log
// passed 16 MB) interrupts a commit DuckDB has already made. The line the
// ingest ends with counts that file: its "N of M stored" is what the
// warehouse holds, and the same command run again stores the rest. Before,
// it said one file fewer (the COMMIT failed with INTERRUPT, the rows
// stored). The signal is sent once the warehouse file grows while the log
// is still full, which only a checkpoint does, so it lands in that window
// however loaded the machine.
func TestSIGINTDuringCommitCountsWhatIsStored(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "traces")
	// 20 traces of about 4 MB of JSON: about 1 MB of log each, so a
	// checkpoint at about the 16th commit.
	if code, _, stderr := runCmd(t, "synth", "--out", src, "--ranks", "10", "--size-mb", "4", "--run", "r"); code != 0 {
		t.Fatalf("synth: %s", stderr)
	}
	db := filepath.Join(dir, "w.duckdb")
	cmd := exec.Command(os.Args[0], "--db", db, "ingest", "--jobs", "1", src)
	cmd.Env = append(os.Environ(), "TRACEHOUSE_TEST_ROLE=main", "TRACEHOUSE_THREADS=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	size := func(p string) int64 {
		st, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return st.Size()
	}
	var err error
	base := int64(-1)
wait:
	for {
		select {
		case err = <-exited:
			t.Fatalf("the ingest ended before any checkpoint (%v): %s", err, stderr.String())
		case <-time.After(2 * time.Millisecond):
		}
		if size(db+".wal") < 1<<20 {
			continue
		}
		switch d := size(db); {
		case base < 0:
			base = d
		case d != base:
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err = <-exited
			break wait
		}
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("want exit 130, got %v (stderr %q)", err, stderr.String())
	}
	m := regexp.MustCompile(`^tracehouse: interrupted: (\d+) of 20 file\(s\) stored, nothing partial; run the same command again to finish\n$`).
		FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("stderr %q, want the one line of an interrupted ingest", stderr.String())
	}
	code, out, errOut := runCmd(t, "--db", db, "--format", "csv", "sql", "SELECT count(*) AS n FROM traces")
	if code != 0 {
		t.Fatalf("sql: %s", errOut)
	}
	if want := "n\n" + m[1] + "\n"; out != want {
		t.Errorf("the ingest said %s stored, the warehouse holds %q", m[1], out)
	}
	n, _ := strconv.Atoi(m[1])
	code, _, errOut = runCmd(t, "--db", db, "ingest", src)
	if want := fmt.Sprintf("ingested %d file(s) ", 20-n); code != 0 || !strings.Contains(errOut, want) ||
		!strings.Contains(errOut, fmt.Sprintf(", %d already ingested", n)) {
		t.Errorf("re-run exit %d: %q, want %q and %d already", code, errOut, want, n)
	}
}

// cancelOnPhase cancels when phase begins.
type cancelOnPhase struct {
	phase  string
	cancel context.CancelFunc
}

func (c cancelOnPhase) Phase(name string) {
	if name == c.phase {
		c.cancel()
	}
}

// TestInterruptWhileSavingSaysOneLine (issue 36, faults 1): an interrupt
// once every file is stored, while the runs' aggregates are saved, ends
// with the same one line as one during the load, counting every file
// stored; the next run saves the aggregates. Before, it printed the chain
// of the save's errors ("save fuse patterns of run(s) [1]: context
// canceled INTERRUPT Error: Interrupted!").
func TestInterruptWhileSavingSaysOneLine(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "w.duckdb")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	io, _, errOut := testIO("")
	root := newCmdRoot(&Factory{IO: io, Getenv: testEnv})
	root.SetArgs([]string{"--db", db, "ingest", demoDir + "/sglang-llama"})
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	_, err := root.ExecuteContextC(aggregates.WithPhaser(ctx, cancelOnPhase{aggregates.PhaseSaving, cancel}))
	if want := "interrupted: 4 of 4 file(s) stored, nothing partial; run the same command again to finish"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q (stderr %q)", err, want, errOut.String())
	}
	code, out, stderr := runCmd(t, "--db", db, "--format", "csv", "sql", "SELECT count(*) AS n FROM traces")
	if code != 0 || out != "n\n4\n" {
		t.Fatalf("warehouse: exit %d %q %s", code, out, stderr)
	}
	if code, _, stderr := runCmd(t, "--db", db, "ingest", demoDir+"/sglang-llama"); code != 0 || !strings.Contains(stderr, "4 already ingested") {
		t.Fatalf("re-run: exit %d %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, "--db", db, "triage", "sglang-llama"); code != 0 {
		t.Errorf("triage after the re-run: exit %d %s", code, stderr)
	}
}

// TestSIGINTLakeIngestCountsWhatTheLakeHolds (issue 36, faults 4): an
// `ingest --lake` interrupted while it loads the files, or while it writes
// them into the lake, ends with "N of M file(s) in the lake", N what the
// lake then holds (a file already there counts), and the same command run
// again adds the rest. Before, an interrupted load said "17 of 20 file(s)
// stored" while the lake held nothing (the files were stored only in the
// throw-away warehouse). The write phase is caught by watching the lake's
// trace markers appear; the load phase by the child's CPU time.
func TestSIGINTLakeIngestCountsWhatTheLakeHolds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Each phase gets its own eight traces (four ranks, prefill and
	// decode). The load's are of 6 MB: the seven loaded after the first
	// take ticks 4-48 of the child (its finish 48-62, its write 62-85;
	// 2026-12-07, by the trace files it held open), so the signal at 20
	// ticks lands in the load. (At 80, chosen when the load took ticks
	// 30-190, it landed in the write, or after the child had ended.)
	// The write's are of 1 MB: its signal waits for the first trace the
	// write commits, whatever the size, and the child loads all seven and
	// the re-run loads those it did not write, which at 6 MB cost about 5
	// of the test's 15 CPU-s (2026-12-06).
	sources := map[string]string{}
	for when, mb := range map[string]string{"load": "6", "write": "1"} {
		sources[when] = filepath.Join(dir, "traces-"+when)
		if code, _, stderr := runCmd(t, "synth", "--out", sources[when], "--ranks", "4", "--size-mb", mb, "--run", "r"); code != 0 {
			t.Fatalf("synth: %s", stderr)
		}
	}
	markers := func(lk string) int {
		m, _ := filepath.Glob(filepath.Join(lk, "traces", "*.parquet"))
		return len(m)
	}
	line := regexp.MustCompile(`^tracehouse: interrupted: (\d+) of 8 file\(s\) in the lake, nothing partial; run the same command again to finish: context canceled\n$`)
	for _, when := range []string{"load", "write"} {
		t.Run(when, func(t *testing.T) {
			src := sources[when]
			all, err := filepath.Glob(filepath.Join(src, "r", "*", "*.trace.json.gz"))
			if err != nil || len(all) != 8 {
				t.Fatalf("%d traces (%v)", len(all), err)
			}
			lk := filepath.Join(t.TempDir(), "lake")
			// one file in the lake before: it counts as there
			if code, _, stderr := runCmd(t, "--lake", lk, "ingest", "--run", "r", all[0]); code != 0 {
				t.Fatalf("first file: %s", stderr)
			}
			before := markers(lk)
			cmd := exec.Command(os.Args[0], "--lake", lk, "ingest", "--jobs", "1", "--run", "r", "--append", src)
			cmd.Env = append(os.Environ(), "TRACEHOUSE_TEST_ROLE=main", "TRACEHOUSE_THREADS=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			if when == "load" {
				waitCPU(t, cmd.Process.Pid, 20)
			} else {
			watch:
				for markers(lk) == before {
					select {
					case err := <-exited:
						exited <- err
						break watch
					case <-time.After(time.Millisecond):
					}
				}
			}
			_ = cmd.Process.Signal(syscall.SIGINT)
			err = <-exited
			var exit *exec.ExitError
			if err == nil {
				t.Skipf("the ingest ended before the signal: %s", stderr.String())
			}
			if !errors.As(err, &exit) || exit.ExitCode() != 130 {
				t.Fatalf("want exit 130, got %v (stderr %q)", err, stderr.String())
			}
			m := line.FindStringSubmatch(stderr.String())
			if m == nil {
				t.Fatalf("stderr %q, want the one line of an interrupted lake ingest", stderr.String())
			}
			code, out, errOut := runCmd(t, "--lake", lk, "--format", "csv", "sql", "SELECT count(*) AS n FROM traces")
			if code != 0 {
				t.Fatalf("sql: %s", errOut)
			}
			if want := "n\n" + m[1] + "\n"; out != want {
				t.Errorf("the ingest said %s in the lake, the lake holds %q", m[1], out)
			}
			n, _ := strconv.Atoi(m[1])
			t.Logf("interrupted with %d of 8 in the lake", n)
			code, _, errOut = runCmd(t, "--lake", lk, "ingest", "--run", "r", "--append", src)
			if want := fmt.Sprintf("ingested %d file(s) ", 8-n); code != 0 || !strings.Contains(errOut, want) {
				t.Errorf("re-run exit %d: %q, want %q", code, errOut, want)
			}
		})
	}
}
