package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tracehouse/tracehouse/bench/buildcli"
	"github.com/tracehouse/tracehouse/bench/host"
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
// shortest wall clock, with its CPU and peak, and the median of each.
//
// With against (another build of the command, an older commit's say),
// each round runs both, in alternating order, and both are reported: on
// a shared machine whose speed drifts by tens of percent within minutes,
// only runs taken side by side compare.
func benchCLI(ctx context.Context, data, dir string, runs int, against string) error {
	bins, err := buildcli.Binaries(ctx, data, "", against)
	if err != nil {
		return err
	}
	return timeCLI(ctx, data, dir, runs, bins, func(jsonBytes int64) string {
		return fmt.Sprintf("tracehouse ingest (CLI, one gzip trace, %d MB JSON)", jsonBytes>>20)
	})
}

// smallTrace and smallDir are benchSmall's inputs: one SGLang decode trace
// of the demo (2,199 events, 183 GPU events, 0.6 MB of JSON), whose cost
// is nearly all the fixed cost of a trace and of a command, and the
// demo's 16 traces of 6 runs.
const (
	smallTrace = "testdata/demo/sglang-llama/2025-07-04_18-26-43/1751653603.1234567-TP-0-DECODE.trace.json.gz"
	smallDir   = "testdata/demo"
)

// benchSmall measures `tracehouse ingest` of small traces as benchCLI
// does, alternated with against when set: one small trace, then the demo
// directory. The medians of CPU time are the figures (what the tests and a
// directory of many small profiles pay per trace).
func benchSmall(ctx context.Context, data string, runs int, against string) error {
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	bins, err := buildcli.Binaries(ctx, data, "", against)
	if err != nil {
		return err
	}
	for _, c := range []struct{ path, what string }{
		{smallTrace, "one small trace"}, {smallDir, "the demo's 16 traces"},
	} {
		if err := timeCLI(ctx, data, c.path, runs, bins, func(jsonBytes int64) string {
			return fmt.Sprintf("tracehouse ingest (CLI, %s, %.1f MB JSON)", c.what, float64(jsonBytes)/1e6)
		}); err != nil {
			return err
		}
	}
	return nil
}

// timeCLI runs each of bins runs times on dir, alternating, and prints
// one line of figures headed by title.
func timeCLI(ctx context.Context, data, dir string, runs int, bins []string, title func(jsonBytes int64) string) error {
	db := filepath.Join(data, "cli.duckdb")
	fmt.Fprintln(os.Stderr, "before:", host.Speed())
	defer func() { fmt.Fprintln(os.Stderr, "after:", host.Speed()) }()
	all := make([][]cliRun, len(bins))
	var jsonBytes int64
	for i := 0; i < runs; i++ {
		for k := range bins {
			// alternate which build goes first
			b := (k + i) % len(bins)
			h := host.Now()
			r, err := ingestOnce(ctx, bins[b], db, dir)
			if err != nil {
				return err
			}
			all[b] = append(all[b], r)
			fmt.Fprintf(os.Stderr, "run %d, %s: wall %.2f s, CPU %.2f s, peak %d MiB, %s\n",
				i+1, bins[b], r.wall.Seconds(), r.cpu.Seconds(), r.peakMiB, h.Busy())
			if jsonBytes == 0 && b == 0 {
				var err error
				if jsonBytes, err = storedJSON(ctx, db); err != nil {
					return err
				}
			}
		}
	}
	var lines []string
	for b, rs := range all {
		best, med := summarize(rs)
		line := fmt.Sprintf("%.1f MB/s (%.2f s wall, %.3f s CPU), peak %d MiB; median of %d %.2f s wall, %.3f s CPU, peak %d MiB",
			float64(jsonBytes)/1e6/best.wall.Seconds(), best.wall.Seconds(), best.cpu.Seconds(), best.peakMiB,
			len(rs), med.wall.Seconds(), med.cpu.Seconds(), med.peakMiB)
		if b > 0 {
			line = bins[b] + " alternated: " + line
		}
		lines = append(lines, line)
	}
	fmt.Printf("%s: %s\n", title(jsonBytes), strings.Join(lines, "; "))
	return nil
}

// ingestOnce runs `bin --db db ingest dir` into a fresh warehouse.
func ingestOnce(ctx context.Context, bin, db, dir string) (cliRun, error) {
	os.Remove(db)
	os.Remove(db + ".wal")
	cmd := exec.CommandContext(ctx, bin, "--db", db, "ingest", dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return cliRun{}, fmt.Errorf("%s ingest: %w", bin, err)
	}
	wall := time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return cliRun{}, errors.New("no resource usage for the child process")
	}
	return cliRun{wall: wall, cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), peakMiB: ru.Maxrss >> 10}, nil
}

// summarize gives the run with the shortest wall clock and the median of
// each measure (taken separately).
func summarize(rs []cliRun) (best, med cliRun) {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b cliRun) int { return cmp.Compare(a.wall, b.wall) })
	best = s[0]
	med.wall = s[len(s)/2].wall
	slices.SortFunc(s, func(a, b cliRun) int { return cmp.Compare(a.cpu, b.cpu) })
	med.cpu = s[len(s)/2].cpu
	slices.SortFunc(s, func(a, b cliRun) int { return cmp.Compare(a.peakMiB, b.peakMiB) })
	med.peakMiB = s[len(s)/2].peakMiB
	return best, med
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
