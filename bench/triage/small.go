package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// The small cases of issue 11, run as a user runs them: the CLI binary
// (built from this tree) as a process, its wall clock and the CPU time
// (user + system) the process and its threads used, best of n.
const (
	// smallTrace is a 0.6 MB (uncompressed) SGLang decode trace of 183 GPU
	// events; smallOther is its TP-1 twin, ingested into a warehouse that
	// already holds the first.
	smallDir   = "testdata/demo/sglang-llama/2025-07-04_18-26-43"
	smallTrace = "1751653603.1234567-TP-0-DECODE.trace.json.gz"
	smallOther = "1751653603.1234567-TP-1-DECODE.trace.json.gz"
)

// smallCase is one timed command line.
type smallCase struct {
	name   string
	target time.Duration
	// prepare runs before each repetition, untimed (a fresh copy of a
	// warehouse, say); args are the command line.
	prepare func() error
	args    []string
}

// timing is one measured process.
type timing struct {
	wall, cpu time.Duration
}

// smallCases builds the CLI and the stored run, then times every case.
// cli, when set, is a built binary to time instead (another commit's, for
// a before/after figure).
func smallCases(ctx context.Context, data, cli string, n int) ([]smallCase, []timing, error) {
	dir := filepath.Join(data, "small")
	if err := os.RemoveAll(dir); err != nil {
		return nil, nil, err
	}
	for _, d := range []string{"run", "other"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, nil, err
		}
	}
	bin := cli
	if bin == "" {
		bin = filepath.Join(dir, "tracehouse")
		fmt.Fprintln(os.Stderr, "building the CLI")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/tracehouse")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return nil, nil, fmt.Errorf("build the CLI: %w", err)
		}
	}
	// One run directory per trace (the label is the directory's name).
	for _, f := range []struct{ src, dst string }{
		{smallTrace, "run"}, {"server_args.json", "run"},
		{smallOther, "other"}, {"server_args.json", "other"},
	} {
		if err := copyFile(filepath.Join(smallDir, f.src), filepath.Join(dir, f.dst, f.src)); err != nil {
			return nil, nil, err
		}
	}
	stored := filepath.Join(dir, "stored.duckdb")
	if _, err := runCLI(ctx, bin, "--db", stored, "ingest", filepath.Join(dir, "run")); err != nil {
		return nil, nil, fmt.Errorf("ingest the stored run: %w", err)
	}
	scratch := filepath.Join(dir, "scratch.duckdb")
	cases := []smallCase{
		{name: "triage RUN, small stored run (183 GPU events)", target: 120 * time.Millisecond,
			args: []string{"--db", stored, "triage", "run"}},
		{name: "ingest 0.6 MB trace into an existing warehouse", target: 150 * time.Millisecond,
			prepare: func() error {
				for _, p := range []string{scratch, scratch + ".wal"} {
					if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
						return err
					}
				}
				return copyFile(stored, scratch)
			},
			args: []string{"--db", scratch, "ingest", filepath.Join(dir, "other")}},
		{name: "--db :memory: triage FILE, 0.6 MB trace (one-shot)", target: 250 * time.Millisecond,
			args: []string{"--db", ":memory:", "triage", filepath.Join(dir, "run", smallTrace)}},
	}
	best := make([]timing, len(cases))
	for i, c := range cases {
		for r := 0; r < n; r++ {
			if c.prepare != nil {
				if err := c.prepare(); err != nil {
					return nil, nil, err
				}
			}
			t, err := runCLI(ctx, bin, c.args...)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", c.name, err)
			}
			fmt.Fprintf(os.Stderr, "  %-52s run %d: %.3f s wall, %.3f s CPU\n", c.name, r+1, t.wall.Seconds(), t.cpu.Seconds())
			if r == 0 || t.wall < best[i].wall {
				best[i] = t
			}
		}
	}
	return cases, best, nil
}

// runCLI runs the CLI once, output discarded, and measures it.
func runCLI(ctx context.Context, bin string, args ...string) (timing, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return timing{}, fmt.Errorf("%s %v: %w", bin, args, err)
	}
	t := timing{wall: time.Since(start)}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		t.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return t, nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
