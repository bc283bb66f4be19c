package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
			t.Fatalf("child's CPU time: %v", err)
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
