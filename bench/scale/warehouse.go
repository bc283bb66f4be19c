package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tracehouse/tracehouse/bench/host"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/synth"
)

// The runs of the warehouse cases: synthetic SGLang decode runs, one rank,
// 16 steps of 8 layers with Python stacks (4.7 MB of JSON, 18 k events,
// 1,472 GPU events each), seeded by their number. From 70% of the series on
// the decode attention is 20% slower, so history has one change point.
const (
	runSteps  = 16
	runLayers = 8
	attention = "BatchDecodeWithPagedKVCache"
)

// layout is where the warehouse cases keep what they build.
type layout struct {
	root             string // per size and batch, so another -runs builds apart
	runs, next       string // the runs' traces; the one more run ingested in the timed case
	large, small     string // warehouse files
	largeL, smallL   string // lakes
	scratch          string // copies written by the timed writers
	largeN, smallN   int
	firstRun, middle string // labels the reports name (present in both warehouses)
	computed         string // a run whose triage report no current build saved (current)
}

func newLayout(c config) layout {
	root := filepath.Join(c.data, fmt.Sprintf("runs%d-batch%d", c.runs, c.batch))
	return layout{root: root, runs: filepath.Join(root, "traces"), next: filepath.Join(root, "next"),
		large: filepath.Join(root, fmt.Sprintf("w%d.duckdb", c.runs)), small: filepath.Join(root, fmt.Sprintf("w%d.duckdb", c.small)),
		largeL: filepath.Join(root, fmt.Sprintf("lake%d", c.runs)), smallL: filepath.Join(root, fmt.Sprintf("lake%d", c.small)),
		scratch: filepath.Join(root, "scratch"), largeN: c.runs, smallN: c.small,
		firstRun: label(3), middle: label(min(7, c.small)), computed: label(min(4, c.small))}
}

func label(i int) string { return fmt.Sprintf("run%04d", i) }

// generateRun writes run i of the series into dir (seeded by its number;
// from 70% of the series on, the slower decode attention).
func generateRun(c config, dir string, i int) error {
	o := synth.Options{Framework: synth.SGLang, Dir: dir, Run: label(i), Stage: synth.StageDecode,
		Steps: runSteps, Layers: runLayers, Seed: int64(i), Gzip: true, Noise: 0.02, BatchSize: 32}
	if i >= c.runs*7/10 {
		o.Edits = []synth.Edit{{Match: attention, Factor: 1.2}}
	}
	_, err := synth.Generate(o)
	return err
}

// newRuns returns the paths of the runs after the large warehouse's, count
// of them: run 1,001 (built with the warehouses) and the ones after it,
// generated here the first time they are asked for (a directory of their
// own, renamed into place whole).
func newRuns(c config, l layout, count int) ([]string, error) {
	paths := []string{filepath.Join(l.next, label(l.largeN+1))}
	if count <= 1 {
		return paths, nil
	}
	dir := filepath.Join(l.root, fmt.Sprintf("series%d", count-1))
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		tmp := dir + ".tmp"
		if err := os.RemoveAll(tmp); err != nil {
			return nil, err
		}
		for i := l.largeN + 2; i <= l.largeN+count; i++ {
			if err := generateRun(c, tmp, i); err != nil {
				return nil, err
			}
		}
		if err := os.Rename(tmp, dir); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	for i := l.largeN + 2; i <= l.largeN+count; i++ {
		paths = append(paths, filepath.Join(dir, label(i)))
	}
	return paths, nil
}

// build generates the runs and builds both warehouses and lakes, unless a
// previous build finished (its "done" file).
func build(ctx context.Context, c config, l layout) error {
	done := filepath.Join(l.root, "done")
	if _, err := os.Stat(done); err == nil && !c.rebuild {
		return nil
	}
	if err := os.RemoveAll(l.root); err != nil {
		return err
	}
	t0 := time.Now()
	for i := 1; i <= c.runs+1; i++ {
		dir := l.runs
		if i == c.runs+1 {
			dir = l.next
		}
		if err := generateRun(c, dir, i); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "generated %d runs in %.1f s\n", c.runs+1, time.Since(t0).Seconds())

	// The large warehouse grows as a team's does, a batch of runs per
	// ingest command (each its own process, transaction per trace and
	// checkpoint at close).
	t1 := time.Now()
	var cpu time.Duration
	for first := 1; first <= c.runs; first += c.batch {
		args := []string{"--db", l.large, "ingest"}
		for i := first; i < first+c.batch && i <= c.runs; i++ {
			args = append(args, filepath.Join(l.runs, label(i)))
		}
		p, err := runCLI(ctx, c.bin, args...)
		if err != nil {
			return err
		}
		cpu += p.cpu
		fmt.Fprintf(os.Stderr, "  ingested runs %d-%d: %.1f s wall, %.1f s CPU, peak %d MiB\n",
			first, min(first+c.batch-1, c.runs), p.wall.Seconds(), p.cpu.Seconds(), p.peakMiB)
	}
	fmt.Fprintf(os.Stderr, "built the %d-run warehouse in %.1f s (%.1f s CPU)\n", c.runs, time.Since(t1).Seconds(), cpu.Seconds())
	args := []string{"--db", l.small, "ingest"}
	for i := 1; i <= c.small; i++ {
		args = append(args, filepath.Join(l.runs, label(i)))
	}
	if _, err := runCLI(ctx, c.bin, args...); err != nil {
		return err
	}
	for _, x := range [][2]string{{l.large, l.largeL}, {l.small, l.smallL}} {
		t := time.Now()
		p, err := runCLI(ctx, c.bin, "--db", x[0], "export", "--lake", x[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "exported %s in %.1f s (%.1f s CPU)\n", x[1], time.Since(t).Seconds(), p.cpu.Seconds())
	}
	fmt.Fprintf(os.Stderr, "built everything in %.1f s\n", time.Since(t0).Seconds())
	return os.WriteFile(done, []byte("ok\n"), 0o644)
}

// warehouseRows builds (once) and measures the warehouse and lake rows.
func warehouseRows(ctx context.Context, c config, add func(row)) error {
	l := newLayout(c)
	if err := build(ctx, c, l); err != nil {
		return err
	}
	if err := os.MkdirAll(l.scratch, 0o755); err != nil {
		return err
	}
	cur := l
	if c.cases["ingest"] || c.cases["readers"] || c.cases["history"] || c.cases["size"] || c.cases["rm"] {
		var err error
		if cur, err = current(ctx, c, l); err != nil {
			return err
		}
	}
	if c.cases["ingest"] {
		if err := ingestRow(ctx, c, cur, add); err != nil {
			return err
		}
	}
	if c.cases["readers"] {
		if err := readerRows(ctx, c, cur, add); err != nil {
			return err
		}
	}
	if c.cases["history"] || c.cases["lake"] {
		if err := historyLakeRows(ctx, c, cur, add); err != nil {
			return err
		}
	}
	if c.cases["size"] {
		if err := sizeRows(ctx, l, cur, add); err != nil {
			return err
		}
	}
	if c.cases["rm"] {
		return rmRow(ctx, c, cur, add)
	}
	return nil
}

// current copies both warehouses into the scratch directory and runs the
// command under test as a writer on each copy once, so that its pending
// migrations and its SQL library are applied as any writer of that build
// would: a reader of a warehouse whose stored library is not its own
// creates the whole library as temporary macros on each of its
// connections, which the reader rows would time too. That write stores
// the first run the reports name again (ingest --replace of its traces,
// the same rows), so that its triage report is saved by this build as
// the finish of an ingest saves a new run's (target.Finish): the reader
// rows time a run ingested by the build under test, and beside it one
// ingested by the build that made the files (no saved report of this
// recipe: computed). The files as built are never written: a build with
// a newer migration would otherwise leave them unreadable to older
// builds, and the first write of a file as built costs a checkpoint that
// rewrites columns once (bench/README.md, "Eighth figures"), which the
// copies have then paid. It returns l with its warehouses the copies.
func current(ctx context.Context, c config, l layout) (layout, error) {
	cur := l
	cur.large = filepath.Join(l.scratch, "current-"+filepath.Base(l.large))
	cur.small = filepath.Join(l.scratch, "current-"+filepath.Base(l.small))
	for _, db := range [][2]string{{l.large, cur.large}, {l.small, cur.small}} {
		if err := copyFile(db[0], db[1]); err != nil {
			return l, err
		}
		if _, err := runCLI(ctx, c.bin, "--db", db[1], "ingest", "--replace", filepath.Join(l.runs, l.firstRun)); err != nil {
			return l, err
		}
	}
	return cur, nil
}

// ingestRow times the ingest of a new run into a copy of the large
// warehouse against into a new one, and into a copy of the small one (the
// same runs: what grows with the runs stored, apart from what any
// warehouse holding runs costs more than an empty one).
//
// A team ingests run after run into one file, and the checkpoint that ends
// an ingest now and then merges a table's row groups again (a vacuum: after
// the rows a replace or an rm deleted, and when the small per-run stores'
// row groups add up), which the next ingests then do not pay. Every round
// copies both warehouses and ingests run 1,001 into each copy, then
// c.series more new runs one after another into the same copy; the ratio
// is the median of those consecutive ingests (the occasional merge
// amortized, as a team sees it). The first ingest after the copy is
// reported beside it: it pays what the copy's last write left, which for
// the large copy is the merge after current()'s replace of run0003, the
// same file every round (bench/README.md, "Twenty-second figures"). Each
// ingest into a new warehouse gets an empty file and the same runs.
func ingestRow(ctx context.Context, c config, l layout, add func(row)) error {
	large, small := fmt.Sprintf("%d runs", l.largeN), fmt.Sprintf("%d runs", l.smallN)
	into := filepath.Join(l.scratch, "into.duckdb")
	intoSmall := filepath.Join(l.scratch, "into-small.duckdb")
	empty := filepath.Join(l.scratch, "empty.duckdb")
	runs, err := newRuns(c, l, c.series+1)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "ingest of runs %d-%d, one after another into each copy\n", l.largeN+1, l.largeN+1+c.series)
	sides := []struct {
		name, db string
		prepare  func() error // before each ingest (the new warehouse's)
	}{
		{name: "into " + large, db: into},
		{name: "into an empty warehouse", db: empty, prepare: func() error { return removeDB(empty) }},
		{name: "into " + small, db: intoSmall},
	}
	first := make([][]proc, len(sides))
	next := make([][]proc, len(sides))
	for i := 0; i < c.n; i++ {
		if err := copyFile(l.large, into); err != nil {
			return err
		}
		if err := copyFile(l.small, intoSmall); err != nil {
			return err
		}
		for j, run := range runs {
			for k := range sides {
				s := (k + i + j) % len(sides) // which side goes first turns
				sd := sides[s]
				if sd.prepare != nil {
					if err := sd.prepare(); err != nil {
						return err
					}
				}
				h := host.Now()
				p, err := runCLI(ctx, c.bin, "--db", sd.db, "ingest", run)
				if err != nil {
					return err
				}
				if j == 0 {
					first[s] = append(first[s], p)
				} else {
					next[s] = append(next[s], p)
				}
				fmt.Fprintf(os.Stderr, "  %s, round %d, %s: %.3f s wall, %.3f s CPU, peak %d MiB, %s\n",
					sd.name, i+1, filepath.Base(run), p.wall.Seconds(), p.cpu.Seconds(), p.peakMiB, h.Busy())
			}
		}
	}
	st := make([]stats, len(sides))
	for k := range sides {
		all := next[k]
		if c.series == 0 {
			all = first[k]
		}
		st[k] = summarize(all)
	}
	f := []stats{summarize(first[0]), summarize(first[1]), summarize(first[2])}
	beside := fmt.Sprintf("; the first after the copy: %.2fx (%.3f vs %.3f s, median of %d)",
		f[0].median.cpu.Seconds()/f[1].median.cpu.Seconds(), f[0].median.cpu.Seconds(), f[1].median.cpu.Seconds(), f[0].n)
	what := fmt.Sprintf("ingest of run %d into %s vs into an empty warehouse", l.largeN+1, large)
	if c.series > 0 {
		what = fmt.Sprintf("ingest of runs %d-%d, one after another, into %s vs into an empty warehouse", l.largeN+2, l.largeN+1+c.series, large)
	}
	r := ratioRow(what, st[0], st[1], 1.2)
	if c.series > 0 {
		r.figure += beside
	}
	add(r)
	r = ratioRow(strings.Replace(what, "an empty warehouse", small, 1), st[0], st[2], 1.2)
	if c.series > 0 {
		r.figure += fmt.Sprintf("; the first after the copy: %.2fx", f[0].median.cpu.Seconds()/f[2].median.cpu.Seconds())
	}
	r.target, r.met = "reported", nil
	add(r)
	return nil
}

// readerRows times triage, compare and runs with many runs stored against
// few.
func readerRows(ctx context.Context, c config, l layout, add func(row)) error {
	large, small := fmt.Sprintf("%d runs", l.largeN), fmt.Sprintf("%d runs", l.smallN)
	for _, cmd := range []struct {
		what   string
		args   []string
		bestOf float64 // > 0: also a bound on the best wall clock, s
	}{
		{"triage " + l.firstRun, []string{"triage", l.firstRun}, 0.15},
		// A run no build of this recipe stored: its report is computed
		// (what every run stored before an upgrade that changed a query
		// or the SQL library costs; reported, not judged).
		{"triage " + l.computed + " (computed: stored by an earlier build)", []string{"triage", l.computed}, 0},
		{"compare " + l.firstRun + " " + l.middle, []string{"compare", l.firstRun, l.middle}, 0},
		// The same output with many runs stored as with few: one run's
		// details. The listing prints every run (1,000 rows against 10),
		// so its ratio measures its output too: beside it, what a printed
		// row costs.
		{"runs " + l.firstRun, []string{"runs", l.firstRun}, 0},
		{"runs", []string{"runs"}, 0},
	} {
		fmt.Fprintln(os.Stderr, cmd.what)
		st, err := alternate(ctx, c.bin, c.n,
			side{name: large, args: append([]string{"--db", l.large}, cmd.args...)},
			side{name: small, args: append([]string{"--db", l.small}, cmd.args...)})
		if err != nil {
			return err
		}
		if cmd.what == "runs" {
			// every row printed: the listing's own cost per run, beyond
			// what listing the few costs
			perRow := (st[0].median.cpu - st[1].median.cpu).Seconds() / float64(l.largeN-l.smallN)
			add(row{what: fmt.Sprintf("runs (the listing: %d rows vs %d), %s vs %s", l.largeN, l.smallN, large, small),
				figure: fmt.Sprintf("%.3f vs %.3f s CPU (%.2fx): %.2f ms CPU per printed row beyond the %d",
					st[0].median.cpu.Seconds(), st[1].median.cpu.Seconds(), st[0].median.cpu.Seconds()/st[1].median.cpu.Seconds(), perRow*1000, l.smallN),
				target: "reported (the same output: 'runs RUN')"})
			continue
		}
		add(ratioRow(fmt.Sprintf("%s, %s vs %s", cmd.what, large, small), st[0], st[1], 1.2))
		if cmd.bestOf > 0 {
			add(boundRow(fmt.Sprintf("%s, %s", cmd.what, large), st[0], cmd.bestOf))
		}
	}

	return nil
}

// historyLakeRows times history over every run, from the warehouse and from
// the lake, and a triage over the lake (merged by 'compact' first, once:
// a lake grown for months is compacted as it grows).
func historyLakeRows(ctx context.Context, c config, l layout, add func(row)) error {
	large := fmt.Sprintf("%d runs", l.largeN)
	if c.cases["lake"] {
		if err := compactRow(ctx, c, l, add); err != nil {
			return err
		}
	}
	for _, cmd := range []struct {
		what  string
		args  []string
		bound float64
		lake  bool
	}{
		{"history --metric step_time, " + large, []string{"--db", l.large, "history", "--metric", "step_time"}, 2, false},
		{"--lake triage " + l.firstRun + ", lake of " + large, []string{"--lake", l.largeL, "triage", l.firstRun}, 1, true},
		{"--lake history --metric step_time, lake of " + large, []string{"--lake", l.largeL, "history", "--metric", "step_time"}, 5, true},
	} {
		n := c.n
		if cmd.lake {
			n = c.lakeN
		}
		if !c.cases["lake"] && cmd.lake || !c.cases["history"] && !cmd.lake {
			continue
		}
		fmt.Fprintln(os.Stderr, cmd.what)
		st, err := alternate(ctx, c.bin, n, side{name: cmd.what, args: cmd.args})
		if err != nil {
			return err
		}
		add(boundRow(cmd.what, st[0], cmd.bound))
	}
	return nil
}

// compactRow merges the large lake ('tracehouse compact', once: the lake
// keeps its generation) and reports what it took and the files a reader
// of the whole lake opens before and after.
func compactRow(ctx context.Context, c config, l layout, add func(row)) error {
	gens, err := filepath.Glob(filepath.Join(l.largeL, "_tracehouse", "merged", "gen-*.json"))
	if err != nil || len(gens) > 0 {
		return err
	}
	before, err := countFiles(l.largeL, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "compact --lake %s\n", l.largeL)
	h := host.Now()
	p, err := runCLI(ctx, c.bin, "--lake", l.largeL, "compact", "--grace", "0")
	if err != nil {
		return err
	}
	after, err := countFiles(l.largeL, true)
	if err != nil {
		return err
	}
	add(row{what: fmt.Sprintf("compact --lake, lake of %d runs (once)", l.largeN),
		figure: fmt.Sprintf("%.1f s wall, %.1f s CPU, peak %d MiB (%s); Parquet files a reader opens: %d -> %d",
			p.wall.Seconds(), p.cpu.Seconds(), p.peakMiB, h.Busy(), before, after),
		target: "reported"})
	return nil
}

// countFiles counts the Parquet files a reader of the whole lake opens:
// every trace's own files, or with merged, the chunk files and the
// tables' schema files.
func countFiles(dir string, merged bool) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		inMerged := strings.HasPrefix(filepath.ToSlash(rel), "_tracehouse/merged/")
		if d.IsDir() || !strings.HasSuffix(p, ".parquet") || strings.HasPrefix(filepath.ToSlash(rel), "_tracehouse/catalog/") {
			return nil
		}
		if !merged && !inMerged || merged && (inMerged || d.Name() == "_schema.parquet") {
			n++
		}
		return nil
	})
	return n, err
}

// sizeRows reports bytes per stored GPU event of both warehouses (the
// files as built, l) and lakes, their GPU events counted in the copies
// cur (current): an open by this build may migrate a file.
func sizeRows(ctx context.Context, l, cur layout, add func(row)) error {
	large, small := fmt.Sprintf("%d runs", l.largeN), fmt.Sprintf("%d runs", l.smallN)
	for _, x := range []struct {
		name, db, counted, lake string
	}{{small, l.small, cur.small, l.smallL}, {large, l.large, cur.large, l.largeL}} {
		gpu, err := gpuEvents(ctx, x.counted)
		if err != nil {
			return err
		}
		wb, err := dbBytes(x.db)
		if err != nil {
			return err
		}
		lb, err := treeBytes(x.lake)
		if err != nil {
			return err
		}
		mb, err := treeBytes(filepath.Join(x.lake, "_tracehouse", "merged"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		merged := ""
		if mb > 0 {
			merged = fmt.Sprintf(" (of which merged %.0f B, %s)", float64(mb)/float64(gpu), mib(mb))
		}
		add(row{what: "bytes per stored GPU event, " + x.name,
			figure: fmt.Sprintf("warehouse %.0f B (%s), lake %.0f B (%s)%s, %d GPU events",
				float64(wb)/float64(gpu), mib(wb), float64(lb)/float64(gpu), mib(lb), merged, gpu),
			target: "reported; linear in runs"})
	}

	return nil
}

// rmRow removes the older half of the large warehouse's runs, on a copy,
// and compares the file's size before and after.
func rmRow(ctx context.Context, c config, l layout, add func(row)) error {
	large := fmt.Sprintf("%d runs", l.largeN)
	gone := filepath.Join(l.scratch, "rm.duckdb")
	if err := copyFile(l.large, gone); err != nil {
		return err
	}
	before, err := dbBytes(gone)
	if err != nil {
		return err
	}
	args := []string{"--db", gone, "rm"}
	for i := 1; i <= l.largeN/2; i++ {
		args = append(args, label(i))
	}
	p, err := runCLI(ctx, c.bin, args...)
	if err != nil {
		return err
	}
	after, err := dbBytes(gone)
	if err != nil {
		return err
	}
	add(row{what: fmt.Sprintf("rm of %d of %s", l.largeN/2, large),
		figure: fmt.Sprintf("file %s -> %s (%.3f s wall, %.3f s CPU)", mib(before), mib(after), p.wall.Seconds(), p.cpu.Seconds()),
		target: "file shrinks", met: judged(after < before)})
	return nil
}

// ratioRow judges a against b by their median CPU time (steadier than wall
// clock on a shared machine), the wall clock beside it.
func ratioRow(what string, a, b stats, limit float64) row {
	r := a.median.cpu.Seconds() / b.median.cpu.Seconds()
	return row{what: what,
		figure: fmt.Sprintf("%.2fx CPU (%.3f vs %.3f s; wall %.3f vs %.3f s, median of %d)", r,
			a.median.cpu.Seconds(), b.median.cpu.Seconds(), a.median.wall.Seconds(), b.median.wall.Seconds(), a.n),
		target: fmt.Sprintf("<= %.1fx", limit), met: judged(r <= limit)}
}

// boundRow judges the best wall clock of s against limit seconds, and
// says beside it whether the median CPU time (user + system) is within
// the limit: on a host shared by other work the wall clock cannot meet a
// bound its CPU time meets, so both are shown.
func boundRow(what string, s stats, limit float64) row {
	cpu := "over"
	if s.median.cpu.Seconds() <= limit {
		cpu = "within"
	}
	return row{what: what,
		figure: fmt.Sprintf("best %.3f s (%s; CPU %s the bound)", s.best.wall.Seconds(), s, cpu),
		target: fmt.Sprintf("<= %g s", limit), met: judged(s.best.wall.Seconds() <= limit)}
}

// removeDB removes a warehouse file and its write-ahead log.
func removeDB(path string) error {
	for _, p := range []string{path, path + ".wal"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// dbBytes is a warehouse's size on disk, its write-ahead log included.
func dbBytes(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	n := st.Size()
	if wal, err := os.Stat(path + ".wal"); err == nil {
		n += wal.Size()
	}
	return n, nil
}

// treeBytes sums the sizes of the files under dir.
func treeBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	return n, err
}

// gpuEvents counts a warehouse's stored GPU events.
func gpuEvents(ctx context.Context, db string) (int64, error) {
	w, err := schema.Open(ctx, db, schema.Options{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer w.Close()
	var n int64
	if err := w.DB.QueryRowContext(ctx, `SELECT count(*) FROM kernels`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s's GPU events: %w", db, err)
	}
	return n, nil
}
