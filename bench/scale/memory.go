package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/synth"
)

// memTrace is one trace of the memory rows, generated once.
type memTrace struct {
	name string // row label
	dir  string // the directory ingested (one trace)
	gen  func(dir string) error
}

// memoryTraces are the three shapes: 1 GB of tiny events, 1 GB
// dense in kernels, and the 270 MB SGLang trace with Python stacks (gzip,
// as bench/ingest -cli measures it).
func memoryTraces(c config, sizeMB int64) []memTrace {
	dense := func(kind string) func(string) error {
		return func(dir string) error {
			ev, gpu, err := writeDense(filepath.Join(dir, "dense-"+kind+".trace.json"), kind, sizeMB<<20)
			if err == nil {
				fmt.Fprintf(os.Stderr, "wrote %s: %d events, %d GPU events\n", dir, ev, gpu)
			}
			return err
		}
	}
	return []memTrace{
		{name: fmt.Sprintf("%d MB of tiny events", sizeMB), dir: filepath.Join(c.data, fmt.Sprintf("tiny-%dMB", sizeMB)), gen: dense(kindTiny)},
		{name: fmt.Sprintf("%d MB kernel-dense", sizeMB), dir: filepath.Join(c.data, fmt.Sprintf("kernels-%dMB", sizeMB)), gen: dense(kindKernels)},
		{name: "270 MB SGLang, Python stacks, gzip", dir: filepath.Join(c.data, "sglang-270MB"), gen: func(dir string) error {
			_, err := synth.Generate(synth.Options{Framework: synth.SGLang, Dir: dir, Run: "run0",
				Model: "meta-llama/Llama-3.1-70B-Instruct", Ranks: 1, Layers: 80, Stage: synth.StageDecode, Gzip: true,
				TargetBytes: 270 << 20, TimeBase: synth.TimeBaseNS, Seed: 1})
			return err
		}},
	}
}

// ensure generates t once.
func (t memTrace) ensure(rebuild bool) error {
	done := filepath.Join(t.dir, "done")
	if _, err := os.Stat(done); err == nil && !rebuild {
		return nil
	}
	if err := os.RemoveAll(t.dir); err != nil {
		return err
	}
	if err := os.MkdirAll(t.dir, 0o755); err != nil {
		return err
	}
	if err := t.gen(t.dir); err != nil {
		return err
	}
	return os.WriteFile(done, nil, 0o644)
}

var ingestedLine = regexp.MustCompile(`ingested (\d+) file\(s\) \((\d+) events, (\d+) GPU events, ([0-9.]+) MB of JSON\)`)

// memoryRows ingests each trace into a fresh warehouse: peak resident set
// of the command for every shape, events per second for the tiny events,
// CPU time for the SGLang trace (median of c.n runs; the 1 GB traces run
// memN times each).
func memoryRows(ctx context.Context, c config, add func(row)) error {
	db := filepath.Join(c.data, "memory.duckdb")
	for i, t := range memoryTraces(c, c.memMB) {
		if err := t.ensure(c.rebuild); err != nil {
			return err
		}
		n := c.memN
		if i == 2 {
			n = c.n
		}
		fmt.Fprintln(os.Stderr, "ingest of", t.name)
		var ps []proc
		var events int64
		for k := 0; k < n; k++ {
			if err := removeDB(db); err != nil {
				return err
			}
			p, err := runCLI(ctx, c.bin, "--db", db, "ingest", t.dir)
			if err != nil {
				return err
			}
			m := ingestedLine.FindStringSubmatch(p.stderr)
			if m == nil || m[1] != "1" {
				return fmt.Errorf("ingest of %s: no \"ingested 1 file(s)\" line in:\n%s", t.dir, p.stderr)
			}
			events, _ = strconv.ParseInt(m[2], 10, 64)
			fmt.Fprintf(os.Stderr, "  run %d: %.2f s wall, %.2f s CPU, peak %d MiB, %d events\n", k+1, p.wall.Seconds(), p.cpu.Seconds(), p.peakMiB, events)
			// The ingest's notes (a save made again without the finish's
			// memory bound, say) explain a peak, so they go beside it.
			for _, line := range strings.Split(p.stderr, "\n") {
				if strings.HasPrefix(line, "note:") {
					fmt.Fprintf(os.Stderr, "    %s\n", line)
				}
			}
			ps = append(ps, p)
		}
		st := summarize(ps)
		peak := int64(0)
		for _, p := range ps {
			peak = max(peak, p.peakMiB)
		}
		add(row{what: "peak memory of ingest, " + t.name,
			figure: fmt.Sprintf("%d MiB (highest of %d; %s)", peak, len(ps), st),
			target: "<= 400 MiB", met: judged(peak <= 400)})
		switch i {
		case 0:
			rate := float64(events) / st.best.wall.Seconds()
			add(row{what: fmt.Sprintf("event-dense throughput, %s (%.2f M events)", t.name, float64(events)/1e6),
				figure: fmt.Sprintf("%.0f k events/s (best wall %.2f s; %.0f k events per CPU-s)", rate/1e3, st.best.wall.Seconds(),
					float64(events)/st.median.cpu.Seconds()/1e3),
				target: ">= 400 k events/s", met: judged(rate >= 400e3)})
		case 2:
			add(row{what: "CPU time of ingest, " + t.name,
				figure: fmt.Sprintf("median %.2f CPU-s (of %d; wall median %.2f s)", st.median.cpu.Seconds(), st.n, st.median.wall.Seconds()),
				target: "<= 3.0 CPU-s", met: judged(st.median.cpu.Seconds() <= 3.0)})
		}
	}
	return removeDB(db)
}
