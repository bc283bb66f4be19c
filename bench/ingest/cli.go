package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/tracehouse/tracehouse/schema"
)

// cliRun is one `tracehouse ingest` process: wall clock, CPU (user+sys)
// and peak resident set, from the kernel's accounting of the child.
type cliRun struct {
	wall, cpu time.Duration
	peakMiB   int64
}

// benchCLI measures ingest as a user runs it: it builds the command,
// then runs `tracehouse --db FRESH ingest DIR` runs times, each into a
// fresh warehouse, so everything the command does is counted (decoding,
// attribution, loading, the catalog, saved overlap, steps and fuse
// patterns, process start and exit). The figure is the run with the
// shortest wall clock, with its CPU and peak.
func benchCLI(ctx context.Context, data, dir string, runs int) error {
	bin := filepath.Join(data, "tracehouse")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/tracehouse")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build the command: %w", err)
	}
	db := filepath.Join(data, "cli.duckdb")
	var all []cliRun
	var jsonBytes int64
	for i := 0; i < runs; i++ {
		os.Remove(db)
		os.Remove(db + ".wal")
		cmd := exec.CommandContext(ctx, bin, "--db", db, "ingest", dir)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("tracehouse ingest: %w", err)
		}
		wall := time.Since(start)
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			return errors.New("no resource usage for the child process")
		}
		r := cliRun{wall: wall, cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), peakMiB: ru.Maxrss >> 10}
		all = append(all, r)
		fmt.Fprintf(os.Stderr, "run %d: wall %.2f s, CPU %.2f s, peak %d MiB, load average %s\n",
			i+1, r.wall.Seconds(), r.cpu.Seconds(), r.peakMiB, loadAverage())
		if i == 0 {
			var err error
			if jsonBytes, err = storedJSON(ctx, db); err != nil {
				return err
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].wall < all[j].wall })
	best := all[0]
	fmt.Printf("tracehouse ingest (CLI, one gzip trace, %d MB JSON): %.1f MB/s (%.2f s wall, %.2f s CPU), peak %d MiB\n",
		jsonBytes>>20, float64(jsonBytes)/1e6/best.wall.Seconds(), best.wall.Seconds(), best.cpu.Seconds(), best.peakMiB)
	return nil
}

// storedJSON reads back how much JSON the warehouse says it ingested.
func storedJSON(ctx context.Context, db string) (int64, error) {
	w, err := schema.Open(ctx, db, schema.Options{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer w.Close()
	var n int64
	if err := w.DB.QueryRowContext(ctx, `SELECT sum(json_bytes) FROM traces`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read the ingested size: %w", err)
	}
	return n, nil
}

// loadAverage is the 1-minute load average, for judging wall clock on a
// shared machine.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
