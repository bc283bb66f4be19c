package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGINTExits130: an interrupted command stops its work and exits 130
// with one line saying so. The query runs for minutes, so the signal always
// lands while it runs.
func TestSIGINTExits130(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "--db", ":memory:", "sql", "SELECT sum(hash(i)) FROM range(100000000000) t(i)")
	cmd.Env = append(os.Environ(), "TRACEHOUSE_TEST_ROLE=main", "TRACEHOUSE_THREADS=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
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
