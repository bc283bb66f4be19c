package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/tracehouse/tracehouse/bench/buildcli"
	"github.com/tracehouse/tracehouse/bench/host"
)

// The small cases of issue 11, run as a user runs them: the CLI binary
// (built from this tree) as a process, its wall clock and the CPU time
// (user + system) the process and its threads used, best and median of n.
const (
	// smallTrace is a 0.6 MB (uncompressed) SGLang decode trace of 183 GPU
	// events; smallOther is its TP-1 twin, ingested into a warehouse that
	// already holds the first.
	smallDir   = "testdata/demo/sglang-llama/2025-07-04_18-26-43"
	smallTrace = "1751653603.1234567-TP-0-DECODE.trace.json.gz"
	smallOther = "1751653603.1234567-TP-1-DECODE.trace.json.gz"
	// manyRuns small runs (synth: SGLang decode, two steps, 0.6 MB of JSON
	// and 184 GPU events each) make the directory ingest case: what one
	// small trace costs when a historical directory is ingested, where the
	// finish is shared by the batch.
	manyRuns = 20
)

// smallCase is one timed command line.
type smallCase struct {
	name   string
	target time.Duration // 0: none
	files  int           // > 0: the case ingests this many files (per-file figure)
	// prepare runs before each repetition, untimed (a fresh copy of a
	// warehouse, say); args are the command line.
	prepare func() error
	args    []string
}

// timing is one measured process.
type timing struct {
	wall, cpu time.Duration
}

// smallResult is one build's figures for one case: the run with the
// shortest wall clock, and the median wall clock and CPU time.
type smallResult struct {
	best, median timing
}

// smallCases builds the CLI and the stored run, then times every case.
// cli, when set, is a built binary to time instead (another commit's, for
// a before/after figure). against, when set, is a second binary timed in
// the same rounds, alternating which goes first, each with a stored
// warehouse of its own (an older build may not open a newer one): on a
// shared machine whose speed drifts within minutes, only runs taken side
// by side compare. results[b][i] is binary b's figure for case i.
func smallCases(ctx context.Context, data, cli, against string, n int) ([]smallCase, [][]smallResult, error) {
	dir := filepath.Join(data, "small")
	if err := os.RemoveAll(dir); err != nil {
		return nil, nil, err
	}
	for _, d := range []string{"run", "other"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, nil, err
		}
	}
	bins, err := buildcli.Binaries(ctx, dir, cli, against)
	if err != nil {
		return nil, nil, err
	}
	bin := bins[0]
	// One run directory per trace (the label is the directory's name).
	for _, f := range []struct{ src, dst string }{
		{smallTrace, "run"}, {"server_args.json", "run"},
		{smallOther, "other"}, {"server_args.json", "other"},
	} {
		if err := copyFile(filepath.Join(smallDir, f.src), filepath.Join(dir, f.dst, f.src)); err != nil {
			return nil, nil, err
		}
	}
	many := filepath.Join(dir, "many")
	for i := 1; i <= manyRuns; i++ {
		if _, err := runCLI(ctx, bin, "synth", "--out", many, "--run", fmt.Sprintf("run%02d", i), "--seed", fmt.Sprint(i),
			"--stage", "decode", "--steps", "2"); err != nil {
			return nil, nil, fmt.Errorf("write the small runs: %w", err)
		}
	}
	cases := make([][]smallCase, len(bins))
	for b, bin := range bins {
		suffix := ""
		if b > 0 {
			suffix = fmt.Sprintf("-%d", b)
		}
		stored := filepath.Join(dir, "stored"+suffix+".duckdb")
		if _, err := runCLI(ctx, bin, "--db", stored, "ingest", filepath.Join(dir, "run")); err != nil {
			return nil, nil, fmt.Errorf("ingest the stored run: %w", err)
		}
		cases[b] = casesOn(dir, stored, filepath.Join(dir, "scratch"+suffix+".duckdb"))
	}
	results, err := timeCases(ctx, bins, cases, n)
	return cases[0], results, err
}

// timeCases runs each case n times with every binary of bins (cases[b]
// for bins[b]), alternating which binary goes first in each round, and
// summarizes each binary's runs of each case (results[b][i]).
func timeCases(ctx context.Context, bins []string, cases [][]smallCase, n int) ([][]smallResult, error) {
	fmt.Fprintln(os.Stderr, "before:", host.Speed())
	defer func() { fmt.Fprintln(os.Stderr, "after:", host.Speed()) }()
	times := make([][][]timing, len(bins))
	for b := range bins {
		times[b] = make([][]timing, len(cases[b]))
	}
	for i := range cases[0] {
		for r := 0; r < n; r++ {
			for k := range bins {
				b := (k + r) % len(bins) // alternate which build goes first
				c := cases[b][i]
				if c.prepare != nil {
					if err := c.prepare(); err != nil {
						return nil, err
					}
				}
				h := host.Now()
				t, err := runCLI(ctx, bins[b], c.args...)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", c.name, err)
				}
				times[b][i] = append(times[b][i], t)
				fmt.Fprintf(os.Stderr, "  %-52s run %d, %s: %.3f s wall, %.3f s CPU, %s\n", c.name, r+1, bins[b], t.wall.Seconds(), t.cpu.Seconds(), h.Busy())
			}
		}
	}
	results := make([][]smallResult, len(bins))
	for b := range bins {
		for _, ts := range times[b] {
			results[b] = append(results[b], summarize(ts))
		}
	}
	return results, nil
}

// casesOn is the small cases on a stored warehouse holding the run "run",
// with scratch for the copy the ingest cases write into.
func casesOn(dir, stored, scratch string) []smallCase {
	fresh := func() error {
		for _, p := range []string{scratch, scratch + ".wal"} {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
		return copyFile(stored, scratch)
	}
	return []smallCase{
		{name: "triage RUN, small stored run (183 GPU events)", target: 120 * time.Millisecond,
			args: []string{"--db", stored, "triage", "run"}},
		{name: "ingest 0.6 MB trace into an existing warehouse", target: 150 * time.Millisecond,
			prepare: fresh, args: []string{"--db", scratch, "ingest", filepath.Join(dir, "other")}},
		{name: "--db :memory: triage FILE, 0.6 MB trace (one-shot)", target: 250 * time.Millisecond,
			args: []string{"--db", ":memory:", "triage", filepath.Join(dir, "run", smallTrace)}},
		{name: fmt.Sprintf("ingest %d small runs into an existing warehouse", manyRuns), files: manyRuns,
			prepare: fresh, args: []string{"--db", scratch, "ingest", filepath.Join(dir, "many")}},
	}
}

// summarize gives the shortest wall clock's run and the median wall clock
// and CPU time (each taken separately; the upper middle of an even count).
func summarize(ts []timing) smallResult {
	s := slices.Clone(ts)
	slices.SortFunc(s, func(a, b timing) int { return cmp.Compare(a.wall, b.wall) })
	res := smallResult{best: s[0]}
	res.median.wall = s[len(s)/2].wall
	slices.SortFunc(s, func(a, b timing) int { return cmp.Compare(a.cpu, b.cpu) })
	res.median.cpu = s[len(s)/2].cpu
	return res
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
