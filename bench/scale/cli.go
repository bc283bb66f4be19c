package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"github.com/tracehouse/tracehouse/bench/host"
)

// proc is one measured process: wall clock, CPU time (user + system, every
// thread) and peak resident set, from the kernel's accounting of the child.
type proc struct {
	wall, cpu time.Duration
	peakMiB   int64
	stderr    string
}

// runCLI runs bin with args, stdout discarded, and measures it; a non-zero
// exit is an error carrying its stderr.
func runCLI(ctx context.Context, bin string, args ...string) (proc, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errOut
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return proc{}, fmt.Errorf("%s %s: %w\n%s", bin, joinArgs(args), err, errOut.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return proc{}, errors.New("no resource usage for the child process")
	}
	return proc{wall: wall, cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), peakMiB: ru.Maxrss >> 10,
		stderr: errOut.String()}, nil
}

// side is one command line of a comparison, with what runs before each
// repetition, untimed (a fresh copy of a warehouse, say).
type side struct {
	name    string
	prepare func() error
	args    []string
}

// stats are the figures of n repetitions of one side: the shortest wall
// clock, and the median of each measure taken separately.
type stats struct {
	best, median proc
	n            int
}

func summarize(ps []proc) stats {
	s := slices.Clone(ps)
	out := stats{n: len(s)}
	slices.SortFunc(s, func(a, b proc) int { return cmp.Compare(a.wall, b.wall) })
	out.best = s[0]
	out.median.wall = s[len(s)/2].wall
	slices.SortFunc(s, func(a, b proc) int { return cmp.Compare(a.cpu, b.cpu) })
	out.median.cpu = s[len(s)/2].cpu
	slices.SortFunc(s, func(a, b proc) int { return cmp.Compare(a.peakMiB, b.peakMiB) })
	out.median.peakMiB = s[len(s)/2].peakMiB
	return out
}

func (s stats) String() string {
	return fmt.Sprintf("median %.3f s wall, %.3f s CPU (best %.3f s)", s.median.wall.Seconds(), s.median.cpu.Seconds(), s.best.wall.Seconds())
}

// alternate runs every side n times, in rounds, alternating which side goes
// first: on a shared machine whose speed drifts within minutes only
// figures taken side by side compare.
func alternate(ctx context.Context, bin string, n int, sides ...side) ([]stats, error) {
	all := make([][]proc, len(sides))
	for i := 0; i < n; i++ {
		for k := range sides {
			j := (k + i) % len(sides)
			sd := sides[j]
			if sd.prepare != nil {
				if err := sd.prepare(); err != nil {
					return nil, err
				}
			}
			h := host.Now()
			p, err := runCLI(ctx, bin, sd.args...)
			if err != nil {
				return nil, err
			}
			all[j] = append(all[j], p)
			fmt.Fprintf(os.Stderr, "  %s, run %d: %.3f s wall, %.3f s CPU, peak %d MiB, %s\n",
				sd.name, i+1, p.wall.Seconds(), p.cpu.Seconds(), p.peakMiB, h.Busy())
		}
	}
	out := make([]stats, len(sides))
	for j := range all {
		out[j] = summarize(all[j])
	}
	return out, nil
}

// copyFile copies src to dst (a warehouse to run a writer on), removing a
// stale write-ahead log of dst, and syncs the copy to disk: left in the page
// cache, its pages would be written back by the first fsync of the command
// timed on it (the checkpoint that ends an ingest), which was charged about
// 20 ms of kernel CPU time for the 316 MB warehouse of 1,000 runs (`perf`),
// a cost no warehouse written by an earlier command has.
func copyFile(src, dst string) error {
	os.Remove(dst + ".wal")
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
