// Command ingest measures ingest throughput and peak memory on synthetic
// traces (the README's Performance table): one large trace, or a directory of traces.
//
//	go run ./bench/ingest                       # one 300 MB trace
//	go run ./bench/ingest -gzip                 # the same, gzip input
//	go run ./bench/ingest -size 1000            # peak memory on 1 GB
//	go run ./bench/ingest -files 40 -size 2000  # a directory of 40 traces, 2 GB in all
//	go run ./bench/ingest -nsys 1000000         # an Nsight Systems export of 1 M kernels
//	go run ./bench/ingest -cli 3                # `tracehouse ingest` of a 270 MB gzip trace, 3 runs
//	go run ./bench/ingest -cli 6 -against OLD   # the same, alternated with another build, OLD
//	go run ./bench/ingest -cli 11 -small        # `tracehouse ingest` of one small demo trace, then the demo's 16
//	go run ./bench/ingest -cli 11 -small -against OLD
//
// Traces are generated once into -data (default bench/out) and reused. The
// figure is printed on the last line of stdout; everything else goes to stderr.
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
	"time"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/synth"
	"github.com/tracehouse/tracehouse/target"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/ingest:", err)
		os.Exit(1)
	}
}

func run() error {
	size := flag.Int64("size", 300, "total uncompressed JSON in MB")
	files := flag.Int("files", 1, "number of trace files")
	gz := flag.Bool("gzip", false, "gzip the traces")
	jobs := flag.Int("jobs", 2, "ingest --jobs")
	cpuprof := flag.String("cpuprofile", "", "write a CPU profile of the ingest to this file")
	memprof := flag.String("memprofile", "", "write a heap profile to this file after the ingest (go tool pprof -sample_index=alloc_space: what the ingest allocated)")
	duckMem := flag.String("duckdb-memory", "", "DuckDB memory_limit to set (e.g. 256MB)")
	data := flag.String("data", filepath.Join("bench", "out"), "directory for generated traces and the warehouse")
	nsysKernels := flag.Int64("nsys", 0, "measure an Nsight Systems export of this many kernels instead")
	cli := flag.Int("cli", 0, "run the tracehouse command this many times instead (its own process, fresh warehouse each time); default size 270 MB, gzip")
	against := flag.String("against", "", "with -cli: alternate each run with this tracehouse binary (another commit's build) and report both")
	threads := flag.Int("threads", 0, "DuckDB's worker threads (0: one per core); 1 runs every statement on its caller, so a CPU profile names the Go code that asked for DuckDB's work")
	finish := flag.Bool("finish", false, "also run what the ingest command runs after loading (target.Finish: catalog, saved overlap, steps, fuse patterns)")
	small := flag.Bool("small", false, "with -cli: ingest testdata/demo's smallest kind of trace (one SGLang decode trace, 183 GPU events) and then its 16 files, what a command costs per small trace")
	flag.Parse()
	if *against != "" && *cli == 0 {
		return fmt.Errorf("-against %s: only with -cli N", *against)
	}
	if *small {
		if *cli == 0 {
			return fmt.Errorf("-small: only with -cli N")
		}
		return benchSmall(context.Background(), *data, *cli, *against)
	}
	if *cli > 0 {
		// The case: a 270 MB SGLang decode trace, gzip, unless told otherwise.
		sizeSet := false
		flag.Visit(func(f *flag.Flag) { sizeSet = sizeSet || f.Name == "size" })
		if !sizeSet {
			*size = 270
		}
		*gz = true
	}
	if *nsysKernels > 0 {
		return benchNsys(context.Background(), *data, *nsysKernels, *jobs, *cpuprof)
	}

	dir := filepath.Join(*data, fmt.Sprintf("traces-%dMB-%dfiles-gz%v", *size, *files, *gz))
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
		fmt.Fprintf(os.Stderr, "generating %d MB in %d file(s) into %s\n", *size, *files, dir)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		for i := 0; i < *files; i++ {
			_, err := synth.Generate(synth.Options{
				Framework: "sglang", Dir: dir, Run: "run" + strconv.Itoa(i), Model: "meta-llama/Llama-3.1-70B-Instruct",
				Ranks: 1, Layers: 80, Stage: "decode", Gzip: *gz,
				TargetBytes: *size << 20 / int64(*files), TimeBase: "base_ns", Seed: int64(i + 1),
			})
			if err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
			return err
		}
	}
	if *cli > 0 {
		return benchCLI(context.Background(), *data, dir, *cli, *against)
	}
	db := filepath.Join(*data, "bench.duckdb")
	os.Remove(db)
	os.Remove(db + ".wal")
	ctx := context.Background()
	w, err := schema.Open(ctx, db, schema.Options{Threads: *threads})
	if err != nil {
		return err
	}
	defer w.Close()
	if *duckMem != "" {
		if _, err := w.DB.ExecContext(ctx, "SET memory_limit = '"+*duckMem+"'"); err != nil {
			return err
		}
	}
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
	start := time.Now()
	res, err := ingest.Ingest(ctx, w, []string{dir}, ingest.Options{Jobs: *jobs, Notice: func(s string) { fmt.Fprintln(os.Stderr, s) }})
	if err != nil {
		return err
	}
	loaded := time.Since(start)
	if *finish {
		if err := target.Finish(ctx, w.DB, catalog.Default()); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "load %.2f s, finish %.2f s\n", loaded.Seconds(), (time.Since(start) - loaded).Seconds())
	}
	elapsed := time.Since(start)
	if err := res.Err(); err != nil {
		return err
	}
	var jsonBytes, events, gpu int64
	for _, f := range res.Files {
		jsonBytes += f.JSONBytes
		events += f.Events
		gpu += f.GPUEvents
	}
	peak := peakMiB()
	if *memprof != "" {
		if err := writeHeapProfile(*memprof); err != nil {
			return err
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(os.Stderr, "go heap: sys %d MiB, heap in use %d MiB, total alloc %d MiB, gc %d\n", ms.Sys>>20, ms.HeapInuse>>20, ms.TotalAlloc>>20, ms.NumGC)
	if err := w.Close(); err != nil {
		return err
	}
	st, _ := os.Stat(db)
	fmt.Fprintf(os.Stderr, "%d files, %.1f MB JSON, %d events (%d GPU) in %.2f s; warehouse %.1f MB (%.0f%% of JSON)\n",
		len(res.Files), float64(jsonBytes)/1e6, events, gpu, elapsed.Seconds(), float64(st.Size())/1e6, 100*float64(st.Size())/float64(jsonBytes))
	kind := "single trace"
	if *files > 1 {
		kind = fmt.Sprintf("%d traces", *files)
	}
	if *gz {
		kind += ", gzip"
	}
	fmt.Printf("ingest (%s, %d MB JSON, jobs %d): %.1f MB/s, peak %d MiB\n", kind, jsonBytes>>20, *jobs, float64(jsonBytes)/1e6/elapsed.Seconds(), peak)
	return nil
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

// writeHeapProfile writes the heap profile, whose alloc_space counts every
// allocation since the process began (the trace's generation is reused
// from bench/out, so nearly all of it is the ingest's).
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
