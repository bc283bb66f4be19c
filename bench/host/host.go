// Package host says how busy the machine was while a benchmark ran, so a
// figure can be judged: on a shared virtual machine the hypervisor takes
// time from the guest (steal), and the same binary's wall clock and CPU
// time drift by tens of percent with it.
package host

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Sample is the machine's CPU accounting at one moment (/proc/stat's
// first line, in clock ticks).
type Sample struct {
	steal, total uint64
	ok           bool
}

// Now reads the accounting; on a system without /proc/stat the sample is
// empty and Busy says so.
func Now() Sample {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return Sample{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return parseStat(line)
}

// parseStat reads /proc/stat's first line: "cpu" and the ticks spent in
// user, nice, system, idle, iowait, irq, softirq, steal, then guest and
// guest_nice, which user and nice already count.
func parseStat(line string) Sample {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return Sample{}
	}
	var s Sample
	for i, v := range f[1:9] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return Sample{}
		}
		s.total += n
		if i == 7 {
			s.steal = n
		}
	}
	s.ok = true
	return s
}

// ticksPerSecond is USER_HZ, 100 on every Linux this runs on.
const ticksPerSecond = 100

// Busy describes the interval from s to now: the time the hypervisor
// stole from this machine's CPUs and its share of all CPU time, and the
// 1-minute load average; "steal ?" where /proc/stat cannot be read.
func (s Sample) Busy() string {
	now := Now()
	load := "load average " + LoadAverage()
	if !s.ok || !now.ok || now.total <= s.total {
		return "steal ?, " + load
	}
	steal := now.steal - s.steal
	d := time.Duration(steal) * time.Second / ticksPerSecond
	return fmt.Sprintf("steal %.2f s (%.0f%%), %s", d.Seconds(), 100*float64(steal)/float64(now.total-s.total), load)
}

// LoadAverage is the 1-minute load average, "?" when unknown.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// Speed times a fixed piece of work on one core (sorting 1 M
// pseudo-random integers, best of three) and describes it, so figures
// taken at different times can be set side by side: when this takes
// longer than usual, so does everything else the benchmark measures.
func Speed() string {
	src := make([]uint64, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range src {
		src[i] = rng.Uint64()
	}
	work := make([]uint64, len(src))
	best := time.Duration(1<<63 - 1)
	for range 3 {
		copy(work, src)
		start := time.Now()
		slices.Sort(work)
		best = min(best, time.Since(start))
	}
	return fmt.Sprintf("reference work (sorting 1 M integers on one core) %.0f ms", float64(best.Microseconds())/1000)
}
