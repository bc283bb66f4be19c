// Command tracefile measures the trace rewriters (perfetto-fix, slice):
// throughput of uncompressed JSON read and peak memory, on a synthetic
// SGLang decode trace replayed through CUDA graphs (PDL overlaps on the
// main stream, so perfetto-fix has lanes to split).
//
//	go run ./bench/tracefile                      # perfetto-fix, 1 GB trace, gzip in and out
//	go run ./bench/tracefile -size 300            # the same on 300 MB (memory must not grow)
//	go run ./bench/tracefile -gzip=false -out json
//	go run ./bench/tracefile -op slice            # slice the middle tenth of the steps
//
// Traces are generated once into -data (default bench/out) and reused. The
// figure is printed on the last line of stdout; everything else goes to
// stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/synth"
	"github.com/tracehouse/tracehouse/tracefile"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/tracefile:", err)
		os.Exit(1)
	}
}

func run() error {
	size := flag.Int64("size", 1000, "uncompressed JSON of the trace in MB")
	gz := flag.Bool("gzip", true, "gzip the input trace")
	outKind := flag.String("out", "json.gz", "output suffix: json.gz or json")
	op := flag.String("op", "fix", "fix (perfetto-fix) or slice")
	cpuprof := flag.String("cpuprofile", "", "write a CPU profile to this file")
	data := flag.String("data", filepath.Join("bench", "out"), "directory for generated traces and outputs")
	flag.Parse()

	dir := filepath.Join(*data, fmt.Sprintf("tracefile-%dMB-gz%v", *size, *gz))
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
		fmt.Fprintf(os.Stderr, "generating %d MB into %s\n", *size, dir)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		_, err := synth.Generate(synth.Options{
			Framework: "sglang", Dir: dir, Run: "run", Model: "meta-llama/Llama-3.1-70B-Instruct",
			Ranks: 2, Layers: 80, Stage: "decode", Graph: true, Gzip: *gz,
			TargetBytes: *size << 20, TimeBase: "base_ns", Seed: 1,
		})
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
			return err
		}
	}
	in, err := findTrace(dir)
	if err != nil {
		return err
	}
	out := filepath.Join(*data, "tracefile-out."+*outKind)
	os.Remove(out)
	defer os.Remove(out)

	// As the command runs: the heap limit main sets for every command.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(ingest.MemoryLimit)
	}
	runtime.GC()
	resetPeak()
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx := context.Background()
	cpu0 := cpuTime()
	start := time.Now()
	var jsonBytes int64
	var what string
	switch *op {
	case "fix":
		res, err := tracefile.PerfettoFix(ctx, in, out, tracefile.FixOptions{Force: true})
		if err != nil {
			return err
		}
		jsonBytes = res.InBytes
		fmt.Fprintf(os.Stderr, "%d events, %d GPU events on %d lanes; %d split into %d added, max depth %d; %d moved, %d flows moved; %.1f MB written\n",
			res.Events, res.GPUEvents, res.Lanes, res.SplitLanes, res.ExtraLanes, res.MaxDepth, res.Moved, res.MovedFlows, float64(res.OutBytes)/1e6)
		what = "perfetto-fix"
	case "slice":
		res, err := benchSlice(ctx, in, out)
		if err != nil {
			return err
		}
		jsonBytes = res
		what = "slice"
	default:
		return fmt.Errorf("-op %q: want fix or slice", *op)
	}
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	peak := peakMiB()
	st, _ := os.Stat(out)
	var outSize int64
	if st != nil {
		outSize = st.Size()
	}
	fmt.Fprintf(os.Stderr, "%.1f MB JSON in %.2f s (two passes), %.2f s of CPU (%.1f MB per CPU second); output file %.1f MB\n",
		float64(jsonBytes)/1e6, elapsed.Seconds(), cpu.Seconds(), float64(jsonBytes)/1e6/cpu.Seconds(), float64(outSize)/1e6)
	kind := "plain"
	if *gz {
		kind = "gzip"
	}
	fmt.Printf("%s (%d MB JSON, %s in, %s out): %.1f MB/s, peak %d MiB\n", what, jsonBytes>>20, kind, *outKind,
		float64(jsonBytes)/1e6/elapsed.Seconds(), peak)
	return nil
}

func findTrace(dir string) (string, error) {
	var found string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(d.Name(), ".trace.json") && found == "" {
			found = p
		}
		return err
	})
	if err == nil && found == "" {
		err = fmt.Errorf("no trace under %s", dir)
	}
	return found, err
}

// cpuTime is the process's user + system CPU time: on a shared machine it
// says more than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeak clears the kernel's peak-RSS mark so generation is not counted.
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func peakMiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb >> 10
		}
	}
	return -1
}
