// Command compare measures `tracehouse compare` on two already-ingested runs
// of about 1 M GPU events each, and `tracehouse history` over 100 runs
// (the README's Performance table: about 2 s each).
//
//	go run ./bench/compare                  # build the warehouse once, then time
//	go run ./bench/compare -kernels 500000  # another size
//	go run ./bench/compare -rebuild         # regenerate the warehouse
//	go run ./bench/compare -each            # each query of each side, wall and CPU
//	go run ./bench/compare -history 100     # history over 100 runs (history.go)
//
// The warehouse is built like bench/triage's: two synthetic SGLang decode
// runs (the candidate's decode attention 20% slower) are ingested, then
// each run's GPU events and steps are replicated in SQL, each copy shifted
// after the previous one and given fresh kernel ids and step numbers,
// until the run holds at least -kernels events; then the per-kernel overlap,
// the per-step aggregates and the fuse-pattern rows are saved
// (target.Finish's work, timed on stderr).
//
// What is timed is what `tracehouse compare BASE CANDIDATE` does after
// ingest: read both sides' step samples and aggregates (queries.CompareFetch),
// the statistics and the verdict (analysis.NewCompare), and the text and JSON
// renderings (discarded). The best of -n runs is the last line of stdout.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/synth"
	"github.com/tracehouse/tracehouse/target"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/compare:", err)
		os.Exit(1)
	}
}

func run() error {
	kernels := flag.Int64("kernels", 1_000_000, "GPU events per run")
	steps := flag.Int("steps", 200, "decode steps written per run before replication")
	n := flag.Int("n", 3, "timed repetitions (the best is reported)")
	rebuild := flag.Bool("rebuild", false, "rebuild the warehouse even if one is there")
	data := flag.String("data", filepath.Join("bench", "out"), "directory for the traces and the warehouse")
	each := flag.Bool("each", false, "time each query of one side on stderr first")
	profile := flag.String("profile", "", "with -each: write DuckDB's JSON profile of each query to `DIR`")
	hist := flag.Int("history", 0, "time `history` over this many runs instead (e.g. 100)")
	histSteps := flag.Int("history-steps", 64, "with -history: decode steps per run")
	flag.Parse()
	ctx := context.Background()
	if *hist > 0 {
		phases = *each
		return historyBench(ctx, *data, *hist, *histSteps, *n, *rebuild)
	}
	dir := filepath.Join(*data, fmt.Sprintf("compare-%dk-%dsteps", *kernels/1000, *steps))
	db := filepath.Join(dir, "compare.duckdb")
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil || *rebuild {
		if err := build(ctx, dir, db, *kernels, *steps); err != nil {
			return err
		}
	}
	w, err := schema.Open(ctx, db, schema.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer w.Close()
	if *each {
		if err := timeEach(ctx, w.DB, *profile); err != nil {
			return err
		}
	}
	best := time.Duration(1 << 62)
	for i := 0; i < *n; i++ {
		t, c := time.Now(), cpuTime()
		var sides [2]*queries.CompareSide
		for j, label := range []string{"base", "cand"} {
			var id int64
			if err := w.DB.QueryRowContext(ctx, `SELECT run_id FROM runs WHERE label = ?`, label).Scan(&id); err != nil {
				return err
			}
			rank := sql.NullInt64{Int64: 0, Valid: true}
			if sides[j], err = queries.CompareFetch(ctx, w.DB, queries.CompareParams{Run: id, Rank: rank}, rank); err != nil {
				return err
			}
		}
		fetched := time.Since(t)
		rep := analysis.NewCompare(sides[0], sides[1], analysis.CompareOptions{Alpha: 0.05, ThresholdPct: 5,
			KernelThreshold: 10, MinDeltaNS: 1000, MinSharePct: 1})
		if err := report.Render(io.Discard, report.Text, report.CompareDoc(rep, report.Text)); err != nil {
			return err
		}
		if err := report.Render(io.Discard, report.JSON, report.CompareDoc(rep, report.JSON)); err != nil {
			return err
		}
		d := time.Since(t)
		fmt.Fprintf(os.Stderr, "run %d: %.2f s, CPU %.2f s (queries %.2f s), %d+%d steps, %s\n", i+1, d.Seconds(),
			(cpuTime() - c).Seconds(), fetched.Seconds(), len(sides[0].Steps), len(sides[1].Steps), verdictShort(report.CompareVerdictLine(rep)))
		best = min(best, d)
	}
	var events int64
	if err := w.DB.QueryRowContext(ctx, `SELECT count(*) FROM kernels`).Scan(&events); err != nil {
		return err
	}
	fmt.Printf("compare of two runs (%d GPU events in all): best of %d %.2f s\n", events, *n, best.Seconds())
	return nil
}

// verdictShort keeps a verdict line to one terminal line.
func verdictShort(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

// timeEach times the queries of each side (rank 0) one by one.
func timeEach(ctx context.Context, sdb *sql.DB, profile string) error {
	db, err := sdb.Conn(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, label := range []string{"base", "cand"} {
		if err := timeSide(ctx, db, label, profile); err != nil {
			return err
		}
	}
	return nil
}

func timeSide(ctx context.Context, db *sql.Conn, label, profile string) error {
	var id int64
	if err := db.QueryRowContext(ctx, `SELECT run_id FROM runs WHERE label = ?`, label).Scan(&id); err != nil {
		return err
	}
	rank := sql.NullInt64{Int64: 0, Valid: true}
	fresh, err := queries.StepsFresh(ctx, db, []int64{id})
	if err != nil {
		return err
	}
	p := queries.CompareParams{Run: id, Rank: rank, Fresh: fresh[id]}
	for _, q := range []struct {
		name string
		f    func() (int, error)
	}{
		{"steps_fresh", func() (int, error) { r, err := queries.StepsFresh(ctx, db, []int64{id}); return len(r), err }},
		{"compare_run", func() (int, error) { _, err := queries.CompareRun(ctx, db, id); return 1, err }},
		{"compare_steps", func() (int, error) { r, err := queries.CompareSteps(ctx, db, p); return len(r), err }},
		{"compare_kernel_steps", func() (int, error) { r, err := queries.CompareKernelSteps(ctx, db, p); return len(r), err }},
		{"compare_kernels", func() (int, error) { r, err := queries.CompareKernels(ctx, db, p); return len(r), err }},
		{"fusion_matches (saved)", func() (int, error) {
			r, saved, err := queries.FusionMatchesCached(ctx, db, queries.FusionMatchesParams{Run: id, Rank: rank})
			if err == nil && !saved {
				err = fmt.Errorf("no current saved copy")
			}
			return len(r), err
		}},
		{"fusion_matches (computed)", func() (int, error) {
			r, err := queries.FusionMatches(ctx, db, queries.FusionMatchesParams{Run: id, Rank: rank})
			return len(r), err
		}},
	} {
		if profile != "" {
			if err := os.MkdirAll(profile, 0o755); err != nil {
				return err
			}
			for _, p := range []string{"PRAGMA enable_profiling = 'json'",
				fmt.Sprintf("PRAGMA profiling_output = '%s'", filepath.Join(profile, label+"."+strings.ReplaceAll(q.name, " ", "_")+".json"))} {
				if _, err := db.ExecContext(ctx, p); err != nil {
					return err
				}
			}
		}
		t, c := time.Now(), cpuTime()
		n, err := q.f()
		if err != nil {
			return fmt.Errorf("%s: %w", q.name, err)
		}
		fmt.Fprintf(os.Stderr, "%s %-24s %6.2f s (CPU %6.2f s)  %d rows\n", label, q.name, time.Since(t).Seconds(), (cpuTime() - c).Seconds(), n)
	}
	return nil
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func build(ctx context.Context, dir, db string, kernels int64, steps int) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	traces := filepath.Join(dir, "traces")
	t0 := time.Now()
	for _, r := range []struct {
		label string
		seed  int64
		edits []synth.Edit
	}{
		{"base", 1, nil},
		{"cand", 2, []synth.Edit{{Match: "BatchDecodeWithPagedKVCache", Factor: 1.2}}},
	} {
		if _, err := synth.Generate(synth.Options{Framework: synth.SGLang, Dir: traces, Run: r.label, Stage: synth.StageDecode,
			Steps: steps, Layers: 32, Seed: r.seed, Gzip: true, Noise: 0.02, BatchSize: 32, Edits: r.edits}); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "wrote the traces in %.1f s\n", time.Since(t0).Seconds())
	w, err := schema.Open(ctx, db, schema.Options{})
	if err != nil {
		return err
	}
	defer w.Close()
	t1 := time.Now()
	res, err := ingest.Ingest(ctx, w, []string{traces}, ingest.Options{})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "ingested in %.1f s\n", time.Since(t1).Seconds())
	t2 := time.Now()
	var runs []int64
	rows, err := w.DB.QueryContext(ctx, `SELECT run_id FROM runs ORDER BY run_id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		runs = append(runs, id)
	}
	rows.Close()
	for _, run := range runs {
		var base, maxOrd, span, maxStep int64
		if err := w.DB.QueryRowContext(ctx, `SELECT count(*), max(kernel_id & 4294967295), max(ts_ns + dur_ns) - min(ts_ns), max(step)
			FROM kernels WHERE run_id = ?`, run).Scan(&base, &maxOrd, &span, &maxStep); err != nil {
			return err
		}
		copies := (kernels + base - 1) / base
		stride := maxOrd + 1
		if stride*copies >= 1<<32 {
			return fmt.Errorf("%d copies of %d ordinals do not fit a trace's id range", copies, stride)
		}
		shift := span + 1_000_000
		if _, err := w.DB.ExecContext(ctx, `
			INSERT INTO kernels
			SELECT k.kernel_id + c.i * $stride, k.trace_id, k.run_id, k.rank, k.stage, k.name_id, k.kind,
			       k.ts_ns + c.i * $shift, k.dur_ns, k.device, k.stream, k.correlation, k.external_id,
			       k.grid, k.block, k.bytes, k.graph_launch, k.launch_id, k.op_id, k.site_id, NULL,
			       k.step + c.i * $steps
			FROM kernels k, range(1, $copies) c(i)
			WHERE k.run_id = $run`,
			sql.Named("stride", stride), sql.Named("shift", shift), sql.Named("steps", maxStep),
			sql.Named("copies", copies), sql.Named("run", run)); err != nil {
			return fmt.Errorf("replicate kernels: %w", err)
		}
		if _, err := w.DB.ExecContext(ctx, `
			INSERT INTO steps
			SELECT s.trace_id, s.step + c.i * $steps, s.source, s.name, s.stage, s.batch_size, s.tokens,
			       s.cpu_ts_ns + c.i * $shift, s.cpu_end_ns + c.i * $shift, s.gpu_ts_ns + c.i * $shift,
			       s.gpu_end_ns + c.i * $shift, false
			FROM steps s JOIN traces t USING (trace_id), range(1, $copies) c(i)
			WHERE t.run_id = $run`,
			sql.Named("shift", shift), sql.Named("steps", maxStep), sql.Named("copies", copies), sql.Named("run", run)); err != nil {
			return fmt.Errorf("replicate steps: %w", err)
		}
	}
	if err := schema.NumberStreams(ctx, w.DB); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "replicated to %d GPU events per run in %.1f s\n", kernels, time.Since(t2).Seconds())
	t3, c3 := time.Now(), cpuTime()
	for _, q := range []string{`DELETE FROM kernel_overlap_runs`, `DELETE FROM step_store_runs`, `DELETE FROM fusion_store_runs`} {
		if _, err := w.DB.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	if err := target.Finish(ctx, w.DB, catalog.Default()); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "saved the overlap, step aggregates and fuse patterns in %.1f s (CPU %.1f s)\n", time.Since(t3).Seconds(), (cpuTime() - c3).Seconds())
	if _, err := w.DB.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "done"), []byte("ok"), 0o644)
}
