// Command triage measures `tracehouse triage` on an already-ingested run of
// about 1 M GPU events (target <= 0.5 s, the README's Performance table), and the small cases of
// issue 11 as a user runs them, the CLI binary as a process (best and
// median of -small-n, wall clock and the process's CPU time): `triage RUN` of a
// stored 183-kernel run (<= 0.12 s), `ingest` of one 0.6 MB trace into an
// existing warehouse (<= 0.15 s) and `--db :memory: triage FILE` of a
// 0.6 MB trace (<= 0.25 s); besides them, with no target, `ingest` of a
// directory of 20 such runs (total and per file); and the read cases: the
// report commands (triage, compare, history, report, sql; triage, compare
// and sql over a lake) on the demo as a process, with no target.
//
//	go run ./bench/triage                    # every case (the 1 M-kernel warehouse is built once, its copies saved as ingest does)
//	go run ./bench/triage -cases small       # the small cases only
//	go run ./bench/triage -cases small -cli /tmp/tracehouse-old   # another build's figures
//	go run ./bench/triage -cases small -against /tmp/tracehouse-old   # this tree's and another build's, alternated
//	go run ./bench/triage -cases reads -against /tmp/tracehouse-old   # the report commands on the demo, warehouse and lake, alternated
//	go run ./bench/triage -kernels 2000000   # another size
//	go run ./bench/triage -rebuild           # regenerate the warehouse
//	go run ./bench/triage -saved-overlap=false   # the copies not saved: overlap and fuse patterns computed
//
// The warehouse is built in two steps, both timed on stderr:
//  1. a synthetic SGLang run (synth.Generate: one rank, eager, an EXTEND
//     and a DECODE file, -seed-mb of JSON) is ingested like any trace, so
//     names, sites, CPU ops, streams and overlaps are realistic;
//  2. its GPU events are replicated in SQL (INSERT ... SELECT over
//     range(copies)), each copy shifted after the previous one in time and
//     given fresh kernel_ids, until the run holds at least -kernels events.
//     Copies keep their site_id/op_id, so every join of the report sees
//     the data a real 1 M-event trace would give it.
//
// What is timed is what `tracehouse triage RUN` does on that warehouse:
// open it read-only, check the installed catalog, run every query of the
// report (header, kernel table, sites, families, overlap, fuse patterns,
// known paths) and render the text and JSON forms (output discarded). The
// best of -n runs is printed on the last line of stdout; everything else
// (build progress, per-query times of the best run) goes to stderr.
package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/migrations"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/synth"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/triage:", err)
		os.Exit(1)
	}
}

func run() error {
	kernels := flag.Int64("kernels", 1_000_000, "GPU events in the timed run")
	seedMB := flag.Int64("seed-mb", 64, "MB of synthetic JSON ingested before replication")
	runs := flag.Int("n", 5, "timed repetitions (the best is reported)")
	rebuild := flag.Bool("rebuild", false, "rebuild the warehouse even if one is there")
	explain := flag.Bool("explain", false, "print EXPLAIN ANALYZE of the slowest query to stderr")
	saved := flag.Bool("saved-overlap", true, "save the run's per-kernel overlap, fuse-pattern and overlap-table rows after ingest, as `tracehouse ingest` does (false: the report computes them)")
	data := flag.String("data", filepath.Join("bench", "out"), "directory for the traces and the warehouse")
	cases := flag.String("cases", "all", "what to time: all, large (the 1 M-kernel run), small (the CLI on a 0.6 MB trace) or reads (the report commands on the demo, in a warehouse and a lake)")
	smallN := flag.Int("small-n", 7, "repetitions of each small or read case (the best and the median are reported)")
	cli := flag.String("cli", "", "time this tracehouse binary in the small and read cases instead of building one from the tree")
	against := flag.String("against", "", "in the small and read cases, alternate each run with this tracehouse binary (another commit's build) and report both")
	flag.Parse()
	if *cases != "all" && *cases != "large" && *cases != "small" && *cases != "reads" {
		return fmt.Errorf("-cases %q: want all, large, small or reads", *cases)
	}

	ctx := context.Background()
	var summary []string
	if *cases == "all" || *cases == "small" {
		fmt.Fprintln(os.Stderr, "small cases: the CLI as a process, best and median of", *smallN)
		cs, results, err := smallCases(ctx, *data, *cli, *against, *smallN)
		if err != nil {
			return err
		}
		short := []string{"small run", "ingest 0.6 MB", "one-shot 0.6 MB", fmt.Sprintf("ingest of %d small runs", manyRuns)}
		summary = append(summary, caseSummary(cs, results, short, *cli, *against)...)
	}
	if *cases == "all" || *cases == "reads" {
		fmt.Fprintln(os.Stderr, "read cases: the CLI as a process on the demo, best and median of", *smallN)
		cs, results, err := readCases(ctx, *data, *cli, *against, *smallN)
		if err != nil {
			return err
		}
		summary = append(summary, caseSummary(cs, results, readShort, *cli, *against)...)
	}
	if *cases == "small" || *cases == "reads" {
		fmt.Printf("triage: %s\n", strings.Join(summary, "; "))
		return nil
	}
	dir := filepath.Join(*data, fmt.Sprintf("triage-%dk-seed%dMB-saved%v", *kernels/1000, *seedMB, *saved))
	db := filepath.Join(dir, "triage.duckdb")
	// The warehouse is reused while the migrations it was built with are
	// the binary's: an edited macro would otherwise be timed in its old form.
	stamp, err := migrationsStamp()
	if err != nil {
		return err
	}
	if done, err := os.ReadFile(filepath.Join(dir, "done")); err != nil || string(done) != stamp || *rebuild {
		if err := build(ctx, dir, db, *kernels, *seedMB, *saved, stamp); err != nil {
			return err
		}
	}
	// The SQL library (sqllib) is not in the stamp: a writable open stores
	// this binary's when the warehouse holds another, as any ingest would.
	// Read-only, a stale library is made TEMP on every connection the
	// report uses (about 0.15 CPU-s each), which is what the timed
	// "open" measured after the library left the migrations.
	if err := refreshLibrary(ctx, db); err != nil {
		return err
	}

	var best time.Duration
	var bestSteps []step
	var n int64
	for i := 0; i < *runs; i++ {
		start, cpu0 := time.Now(), cpuTime()
		steps, count, err := triage(ctx, db)
		if err != nil {
			return err
		}
		el := time.Since(start)
		fmt.Fprintf(os.Stderr, "run %d: %.3f s (CPU %.3f s)\n", i+1, el.Seconds(), (cpuTime() - cpu0).Seconds())
		if i == 0 || el < best {
			best, bestSteps, n = el, steps, count
		}
	}
	fmt.Fprintln(os.Stderr, "best run, by step:")
	for _, s := range bestSteps {
		fmt.Fprintf(os.Stderr, "  %-22s %7.3f s\n", s.name, s.d.Seconds())
	}
	// Where the time goes: the same queries once more, one at a time.
	perQuery, err := breakdown(ctx, db)
	if err != nil {
		return err
	}
	sort.SliceStable(perQuery, func(i, j int) bool { return perQuery[i].d > perQuery[j].d })
	fmt.Fprintln(os.Stderr, "queries, one at a time (a separate pass):")
	for _, s := range perQuery {
		fmt.Fprintf(os.Stderr, "  %-22s %7.3f s\n", s.name, s.d.Seconds())
	}
	if *explain && len(perQuery) > 0 {
		if err := explainQuery(ctx, db, perQuery[0].name); err != nil {
			return err
		}
	}
	summary = append([]string{fmt.Sprintf("%.2f s for %d kernels", best.Seconds(), n)}, summary...)
	fmt.Printf("triage: %s\n", strings.Join(summary, "; "))
	return nil
}

// build generates, ingests and replicates the benchmark run.
func build(ctx context.Context, dir, db string, kernels, seedMB int64, saved bool, stamp string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	t0 := time.Now()
	fmt.Fprintf(os.Stderr, "generating %d MB of SGLang traces into %s\n", seedMB, dir)
	_, err := synth.Generate(synth.Options{
		Framework: "sglang", Dir: filepath.Join(dir, "traces"), Run: "bench-run",
		Model: "meta-llama/Llama-3.1-8B-Instruct", Ranks: 1, Layers: 32,
		TargetBytes: seedMB << 20, Seed: 11,
	})
	if err != nil {
		return err
	}
	w, err := schema.Open(ctx, db, schema.Options{})
	if err != nil {
		return err
	}
	defer w.Close()
	res, err := ingest.Ingest(ctx, w, []string{filepath.Join(dir, "traces")}, ingest.Options{Jobs: 2})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		return err
	}
	if err := ingest.InstallCatalog(ctx, w.DB, catalog.Default()); err != nil {
		return err
	}
	var run, base, maxOrdinal, span int64
	err = w.DB.QueryRowContext(ctx, `
		SELECT any_value(run_id), count(*), max(kernel_id & 4294967295),
		       max(ts_ns + dur_ns) - min(ts_ns)
		FROM kernels`).Scan(&run, &base, &maxOrdinal, &span)
	if err != nil {
		return fmt.Errorf("count kernels: %w", err)
	}
	fmt.Fprintf(os.Stderr, "ingested %d GPU events in %.1f s\n", base, time.Since(t0).Seconds())
	copies := (kernels + base - 1) / base
	// Fresh ids: each copy takes the next block of ordinals inside its
	// trace's 2^32 id range; blocks must fit, which the assertion checks.
	stride := int64(1)
	for stride <= maxOrdinal {
		stride <<= 1
	}
	if stride*copies >= 1<<32 {
		return fmt.Errorf("%d copies of %d ordinals do not fit a trace's id range: raise -seed-mb", copies, stride)
	}
	t1 := time.Now()
	_, err = w.DB.ExecContext(ctx, `
		INSERT INTO kernels
		SELECT k.kernel_id + c.i * $stride, k.trace_id, k.run_id, k.rank, k.stage, k.name_id, k.kind,
		       k.ts_ns + c.i * $shift, k.dur_ns, k.device, k.stream, k.correlation, k.external_id,
		       k.grid, k.block, k.bytes, k.graph_launch, k.launch_id, k.op_id, k.site_id, NULL, k.step
		FROM kernels k, range(1, $copies) c(i)
		WHERE k.run_id = $run`,
		sql.Named("stride", stride), sql.Named("shift", span+1_000_000),
		sql.Named("copies", copies), sql.Named("run", run))
	if err != nil {
		return fmt.Errorf("replicate kernels: %w", err)
	}
	if err := schema.NumberStreams(ctx, w.DB); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "replicated to %d GPU events (%d copies) in %.1f s\n", base*copies, copies, time.Since(t1).Seconds())
	if saved {
		t2 := time.Now()
		if err := aggregates.SaveOverlap(ctx, w.DB, run); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "saved the per-kernel overlap in %.1f s\n", time.Since(t2).Seconds())
		// and the fuse-pattern rows, as aggregates.Finish does after ingest
		t3 := time.Now()
		if err := aggregates.SaveFusion(ctx, w.DB, []int64{run}); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "saved the fuse-pattern rows in %.1f s\n", time.Since(t3).Seconds())
		// and the overlap-opportunity rows, as aggregates.Finish does last
		t4 := time.Now()
		if err := aggregates.SaveOverlapRows(ctx, w.DB, []int64{run}, queries.DefaultMinDurNS); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "saved the overlap rows in %.1f s\n", time.Since(t4).Seconds())
		// and the step aggregates with the idle rows per step, as Finish does
		t5 := time.Now()
		if err := aggregates.SaveSteps(ctx, w.DB, run); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "saved the step aggregates and idle rows in %.1f s\n", time.Since(t5).Seconds())
	}
	if _, err := w.DB.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "done"), []byte(stamp), 0o644)
}

// migrationsStamp is a digest of every embedded migration.
func migrationsStamp() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	// what build saves: bump when it changes (2: the fuse-pattern rows)
	fmt.Fprintf(h, "build 2")
	return hex.EncodeToString(h.Sum(nil)), err
}

// refreshLibrary opens the warehouse for writing once, which stores the
// binary's SQL library when the warehouse's differs (schema.Open).
func refreshLibrary(ctx context.Context, db string) error {
	w, err := schema.Open(ctx, db, schema.Options{MustExist: true})
	if err != nil {
		return err
	}
	return w.Close()
}

type step struct {
	name string
	d    time.Duration
}

// benchParams are triage's defaults: rank 0, --min-share 1, 10 overlap rows.
func benchParams(run int64) queries.TriageParams {
	return queries.TriageParams{Run: run, Rank: sql.NullInt64{Int64: 0, Valid: true}, MinShare: 1, OverlapRows: 10}
}

// triage does what `tracehouse triage` does for the most recent run, rank
// 0, default flags, timing every step.
func triage(ctx context.Context, path string) ([]step, int64, error) {
	var steps []step
	last := time.Now()
	mark := func(name string) {
		now := time.Now()
		steps = append(steps, step{name, now.Sub(last)})
		last = now
	}
	w, err := schema.Open(ctx, path, schema.Options{ReadOnly: true})
	if err != nil {
		return nil, 0, err
	}
	defer w.Close()
	h, err := ingest.InstalledCatalogHash(ctx, w.DB)
	if err != nil {
		return nil, 0, err
	}
	if h != catalog.Default().Hash() {
		return nil, 0, fmt.Errorf("the warehouse's catalog is stale: run with -rebuild")
	}
	mark("open + catalog check")
	runs, err := queries.Runs(ctx, w.DB)
	if err != nil || len(runs) == 0 {
		return nil, 0, fmt.Errorf("runs: %v (%d)", err, len(runs))
	}
	run := runs[0].RunID
	if _, err := queries.TriageGPUEvents(ctx, w.DB, run); err != nil {
		return nil, 0, err
	}
	mark("runs + gpu events")
	d, err := queries.Triage(ctx, w.DB, benchParams(run))
	if err != nil {
		return nil, 0, err
	}
	mark("queries.Triage")
	rep := report.NewTriage(d, report.TriageOptions{})
	if err := report.Render(io.Discard, report.Text, rep.Doc(report.Text)); err != nil {
		return nil, 0, err
	}
	if err := report.Render(io.Discard, report.JSON, rep.Doc(report.JSON)); err != nil {
		return nil, 0, err
	}
	mark("render text + json")
	var n int64
	for _, st := range rep.Stages {
		n += st.Totals.GPUEvents
	}
	return steps, n, nil
}

// breakdown times each query wrapper of queries.Triage on its own (same
// parameters, same order; known paths for all stages at once).
func breakdown(ctx context.Context, path string) ([]step, error) {
	w, err := schema.Open(ctx, path, schema.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer w.Close()
	db := w.DB
	var run int64
	if err := db.QueryRowContext(ctx, `SELECT max(run_id) FROM runs`).Scan(&run); err != nil {
		return nil, err
	}
	p := benchParams(run)
	var steps []step
	last := time.Now()
	check := func(name string, e error) {
		if err == nil && e != nil {
			err = fmt.Errorf("%s: %w", name, e)
		}
		now := time.Now()
		steps = append(steps, step{name, now.Sub(last)})
		last = now
	}
	_, e := queries.TriageRun(ctx, db, sql.NullInt64{Int64: p.Run, Valid: true}, sql.NullString{})
	check("triage_run", e)
	_, e = queries.TriageTraces(ctx, db, p.Run)
	check("triage_traces", e)
	_, e = queries.TriageGPUEvents(ctx, db, p.Run)
	check("triage_gpu_events", e)
	// computed once by queries.Triage and passed to the checks of the
	// saved copies (stage_busy, overlap and fuse-pattern rows)
	fp, e := queries.OverlapFingerprint(ctx, db, p.Run)
	check("overlap_fingerprint", e)
	_, e = queries.StageBusy(ctx, db, queries.StageBusyParams{Run: p.Run, Rank: p.Rank, Stage: p.Stage, OverlapFP: fp})
	check("stage_busy", e)
	_, e = queries.TriageCoverage(ctx, db, queries.TriageCoverageParams{Run: p.Run, Mapping: p.Mapping, Rank: p.Rank, Stage: p.Stage})
	check("triage_coverage", e)
	_, e = queries.FamilyRollup(ctx, db, queries.FamilyRollupParams{Run: p.Run, Rank: p.Rank, Stage: p.Stage})
	check("family_rollup", e)
	_, e = queries.KernelTable(ctx, db, queries.KernelTableParams{Run: p.Run, Rank: p.Rank, Stage: p.Stage, MinShare: p.MinShare})
	check("kernel_table", e)
	_, e = queries.KernelSites(ctx, db, queries.KernelSitesParams{Run: p.Run, Mapping: p.Mapping, Rank: p.Rank, Stage: p.Stage})
	check("kernel_sites", e)
	overlap, e := queries.OverlapByKernel(ctx, db, queries.OverlapByKernelParams{Run: p.Run, Mapping: p.Mapping, Rank: p.Rank,
		Stage: p.Stage, MinShare: p.MinShare, MaxRows: p.OverlapRows})
	check("overlap_by_kernel", e)
	// what queries.Triage runs: the saved rows when current (freshness
	// check + read), else the same query again
	_, saved, e := queries.OverlapByKernelCached(ctx, db, queries.OverlapByKernelParams{Run: p.Run, Mapping: p.Mapping,
		Rank: p.Rank, Stage: p.Stage, MinShare: p.MinShare, MaxRows: p.OverlapRows, OverlapFP: fp})
	if saved {
		check("overlap_by_kernel_saved", e)
	} else {
		check("overlap_by_kernel again", e)
	}
	pairs := make([]queries.KnownPathPair, len(overlap))
	for i, o := range overlap {
		pairs[i] = queries.KnownPathPair{Kernel: o.Kernel, Dominant: o.Dominant.String, Stage: o.Stage}
	}
	_, e = queries.KnownPaths(ctx, db, queries.KnownPathsParams{Run: p.Run, Mapping: p.Mapping, Rank: p.Rank, Pairs: pairs})
	check("known_paths", e)
	// what queries.Triage runs: the saved rows when current, else computed
	_, saved, e = queries.FusionMatchesCached(ctx, db, queries.FusionMatchesParams{Run: p.Run, Mapping: p.Mapping, Rank: p.Rank,
		Stage: p.Stage, MinShare: p.MinShare, OverlapFP: fp})
	if saved {
		check("fusion_matches_saved", e)
	} else {
		check("fusion_matches again", e)
	}
	_, e = queries.FusionMatches(ctx, db, queries.FusionMatchesParams{Run: p.Run, Mapping: p.Mapping, Rank: p.Rank,
		Stage: p.Stage, MinShare: p.MinShare})
	check("fusion_matches", e)
	_, e = queries.FusionSimilarity(ctx, db, queries.FusionSimilarityParams{Run: p.Run, Mapping: p.Mapping,
		Rank: p.Rank, Stage: p.Stage})
	check("fusion_similarity", e)
	// Where the GPU waits, launch overhead, spread, comm overlap (issue 37)
	fresh, e := queries.IdleFresh(ctx, db, p.Run, fp)
	check("idle_fresh", e)
	ip := queries.IdleParams{Run: p.Run, Rank: p.Rank, Stage: p.Stage, Gaps: queries.DefaultIdleGaps,
		Steps: queries.DefaultIdleSteps, Fresh: fresh}
	_, e = queries.IdleByStage(ctx, db, ip)
	check("idle_by_stage", e)
	_, e = queries.IdleByStep(ctx, db, ip)
	check("idle_by_step", e)
	_, e = queries.IdleWorstGaps(ctx, db, ip)
	check("idle_worst_gaps", e)
	// saved with the step aggregates, read when current, as queries.Triage does
	lp := queries.LaunchParams{Run: p.Run, Rank: p.Rank, Stage: p.Stage, Fresh: sql.NullBool{Bool: fresh, Valid: true}}
	_, e = queries.LaunchByKernel(ctx, db, lp)
	check("launch_by_kernel", e)
	_, e = queries.LaunchByStage(ctx, db, lp)
	check("launch_by_stage", e)
	_, e = queries.KernelSpread(ctx, db, lp)
	check("kernel_spread", e)
	_, e = queries.CommOverlap(ctx, db, lp)
	check("comm_overlap", e)
	// --rank all only: the straggler rank (the bench run has one rank)
	_, e = queries.StragglerRanks(ctx, db, queries.StragglerParams{Run: p.Run, Stage: p.Stage})
	check("straggler_ranks", e)
	_, e = queries.StragglerSites(ctx, db, queries.StragglerParams{Run: p.Run, Stage: p.Stage})
	check("straggler_sites", e)
	return steps, err
}

// explainQuery prints EXPLAIN ANALYZE of one named query for the run.
func explainQuery(ctx context.Context, path, name string) error {
	text, err := queries.Text(name)
	if err != nil {
		return nil // a step that is not one query file
	}
	w, err := schema.Open(ctx, path, schema.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer w.Close()
	var run int64
	if err := w.DB.QueryRowContext(ctx, `SELECT max(run_id) FROM runs`).Scan(&run); err != nil {
		return err
	}
	args := []any{sql.Named("run", run), sql.Named("mapping", sql.NullInt64{}), sql.Named("rank", int64(0)),
		sql.Named("stage", sql.NullString{}), sql.Named("min_share", 1.0), sql.Named("min_dur_ns", int64(5000)),
		sql.Named("overlap_fp", nil), sql.Named("fresh", nil)}
	rows, err := w.DB.QueryContext(ctx, "EXPLAIN ANALYZE "+text, usedArgs(text, args)...)
	if err != nil {
		return fmt.Errorf("explain %s: %w", name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind, plan string
		if err := rows.Scan(&kind, &plan); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, plan)
	}
	return rows.Err()
}

// usedArgs keeps the named arguments the query text mentions: DuckDB
// rejects unused named parameters.
func usedArgs(text string, args []any) []any {
	var out []any
	for _, a := range args {
		if n, ok := a.(sql.NamedArg); ok && strings.Contains(text, "$"+n.Name) {
			out = append(out, a)
		}
	}
	return out
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// caseSummary prints each binary's figures for cases on stderr and
// returns the summary line of each (short names the cases).
func caseSummary(cs []smallCase, results [][]smallResult, short []string, cli, against string) []string {
	var summary []string
	for b, rs := range results {
		switch {
		case len(results) == 1:
		case b == 0 && cli != "":
			fmt.Fprintln(os.Stderr, cli+":")
		case b == 0:
			fmt.Fprintln(os.Stderr, "this tree's build:")
		default:
			fmt.Fprintln(os.Stderr, against+":")
		}
		var parts []string
		for i, c := range cs {
			r := rs[i]
			about := "no target"
			if c.target > 0 {
				about = fmt.Sprintf("target %.2f s", c.target.Seconds())
			}
			if c.files > 0 {
				about = fmt.Sprintf("per file %.3f s, median %.3f s", r.best.wall.Seconds()/float64(c.files), r.median.wall.Seconds()/float64(c.files))
			}
			fmt.Fprintf(os.Stderr, "%-52s %.3f s wall, %.3f s CPU; median %.3f s, %.3f s CPU (%s)\n", c.name,
				r.best.wall.Seconds(), r.best.cpu.Seconds(), r.median.wall.Seconds(), r.median.cpu.Seconds(), about)
			part := fmt.Sprintf("%s %.2f s (CPU %.2f; median %.2f)", short[i], r.best.wall.Seconds(), r.best.cpu.Seconds(), r.median.wall.Seconds())
			if c.files > 0 {
				part = fmt.Sprintf("%s %.2f s, %.3f s per file (CPU %.2f; median %.2f)", short[i], r.best.wall.Seconds(),
					r.best.wall.Seconds()/float64(c.files), r.best.cpu.Seconds(), r.median.wall.Seconds())
			}
			parts = append(parts, part)
		}
		line := strings.Join(parts, "; ")
		if b > 0 {
			line = against + " alternated: " + line
		}
		summary = append(summary, line)
	}
	return summary
}
