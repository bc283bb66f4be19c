package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// orderTrace is one decode trace of the order-independence fixture: rank
// rank's capture window (0 or 1) of run r, or of run x (the other; its
// directory sorts after r's). Every
// trace starts its four steps at the same instants, as copies of one
// capture would, so that ties reach across traces:
//   - the all-reduce (10 us) opens each step; its longest instance ties
//     between the two windows of rank 0 (same start), and only window 0
//     has a GEMM right after it (the overlap table's dependency signal);
//   - `elt` (7 us) is launched from site a in window 0 and from site b in
//     window 1: each site holds half of its time;
//   - `void fuse_k(...)` (6 us) is two raw names of one short name, one a
//     communication kernel (its parameter list nests too deep for the
//     classifier to drop) and one not, each with half of the time;
//   - a 34 us gap before the tail kernel (tail_w0, tail_w1: a name of each
//     window), at the same instant in both windows;
//   - the tail kernel is long in window 1 of rank 0 and in window 0 of
//     rank 1, so compare's pairing of the i-th steps of the ranks matters.
//
// Window 0 names its sites and kernel names in one order, window 1 and
// run x in the other, so whichever file is ingested first takes the
// smaller name and site ids.
func orderTrace(run string, rank, window int) string {
	var ev []string
	add := func(format string, args ...any) { ev = append(ev, fmt.Sprintf(format, args...)) }
	siteA := `/w/python/sglang/srt/layers/a.py(10): fa`
	siteB := `/w/python/sglang/srt/layers/b.py(20): fb`
	fuse := []string{`void fuse_k(((((((a2a)))))))`, `void fuse_k(int)`}
	eltSite := siteA
	if window == 1 || run == "x" {
		eltSite = siteB
	}
	fuseName := fuse[window]
	if run == "x" {
		fuse[0], fuse[1] = fuse[1], fuse[0]
		siteA, siteB = siteB, siteA
	}
	if window == 1 {
		siteA, siteB = siteB, siteA
	}
	tail := 5
	if (rank == 0) == (window == 1) {
		tail = 25
	}
	corr := 0
	for s := range 4 {
		base := 1000 * (s + 1)
		add(`{"ph":"X","cat":"user_annotation","name":"step[DECODE bs=1]","pid":100,"tid":101,"ts":%d,"dur":900}`, base)
		add(`{"ph":"X","cat":"gpu_user_annotation","name":"step[DECODE bs=1]","pid":0,"tid":7,"ts":%d,"dur":890,"args":{"device":0}}`, base+5)
		if s == 0 {
			// the first step meets both sites and both raw names, in this
			// trace's order
			for i, site := range []string{siteA, siteB} {
				add(`{"ph":"X","cat":"python_function","name":%q,"pid":100,"tid":102,"ts":%d,"dur":1,"args":{"Python id":%d,"Python parent id":0}}`, site, base+i, 100+i)
			}
			for i, n := range fuse {
				add(`{"ph":"X","cat":"kernel","name":%q,"pid":0,"tid":9,"ts":%d,"dur":0,"args":{"device":1,"stream":9}}`, n, base+i)
			}
		}
		arrive := base + 10
		if rank == 1 && window == 0 {
			arrive += 2 // rank 1 arrives last at window 0's collectives
		}
		add(`{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_bf16_RING_LL","pid":0,"tid":7,"ts":%d,"dur":10,"args":{"device":0,"stream":7}}`, arrive)
		if window == 0 && run == "r" {
			add(`{"ph":"X","cat":"kernel","name":"ampere_bf16_s16816gemm_128x128","pid":0,"tid":7,"ts":%d,"dur":5,"args":{"device":0,"stream":7}}`, base+21)
		}
		corr++
		add(`{"ph":"X","cat":"python_function","name":%q,"pid":100,"tid":101,"ts":%d,"dur":5,"args":{"Python id":%d,"Python parent id":0}}`, eltSite, base+30, corr)
		add(`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":101,"ts":%d,"dur":2,"args":{"correlation":%d}}`, base+31, corr)
		add(`{"ph":"X","cat":"kernel","name":"elt","pid":0,"tid":7,"ts":%d,"dur":7,"args":{"device":0,"stream":7,"correlation":%d}}`, base+40, corr)
		add(`{"ph":"X","cat":"kernel","name":%q,"pid":0,"tid":7,"ts":%d,"dur":6,"args":{"device":0,"stream":7}}`, fuseName, base+60)
		add(`{"ph":"X","cat":"kernel","name":"tail_w%d","pid":0,"tid":7,"ts":%d,"dur":%d,"args":{"device":0,"stream":7}}`, window, base+100, tail)
	}
	return "{\"traceEvents\": [\n" + strings.Join(ev, ",\n") + "\n]}\n"
}

// writeOrderFixture writes the fixture's files into dir: run r's four
// traces (ranks 0 and 1, windows 0 and 1) and run x's one, under dir/r and
// dir/x, each window in a directory of its own.
func writeOrderFixture(t *testing.T, dir string) {
	t.Helper()
	for _, f := range orderFiles {
		path := filepath.Join(dir, f.path())
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(orderTrace(f.run, f.rank, f.window)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type orderFile struct {
	run          string
	rank, window int
}

func (f orderFile) path() string {
	return filepath.Join(f.run, fmt.Sprintf("w%d", f.window), fmt.Sprintf("w%d-TP-%d-DECODE.trace.json", f.window, f.rank))
}

var orderFiles = []orderFile{{"r", 0, 0}, {"r", 1, 0}, {"r", 0, 1}, {"r", 1, 1}, {"x", 0, 0}}

// orderCmd runs one command line in-process and fails the test on a
// non-zero exit.
func orderCmd(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	env := func(key string) string {
		if key == "TRACEHOUSE_THREADS" {
			return "1"
		}
		return ""
	}
	if code := run(args, &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, env); code != 0 {
		t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}

// orderMasks are what a report says of the warehouse rather than of the
// traces: run ids and the times runs were stored.
var orderMasks = []*regexp.Regexp{
	regexp.MustCompile(`"run_id": \d+`),
	regexp.MustCompile(`\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?`),
}

// orderReports stores the fixture's files into a new warehouse by the
// command lines given (ingest and tag, each with its arguments and flags),
// and returns every report of run r: triage of every rank (kernel,
// overlap, fuse-pattern, idle and straggler tables), two-trace triage with
// r lending its Python sites to x, compare with x, history over both, in
// JSON.
func orderReports(t *testing.T, stores [][]string) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "w.duckdb")
	for _, args := range stores {
		orderCmd(t, append([]string{"--db", db}, args...)...)
	}
	var b strings.Builder
	for _, args := range [][]string{
		{"triage", "r", "--rank", "all"},
		{"triage", "--mapping", "r", "--formal", "x"},
		{"compare", "x", "r", "--rank", "all"},
		{"history", "--kernel", ".", "--by", "seq"},
	} {
		out := orderCmd(t, append([]string{"--db", db, "--format", "json"}, args...)...)
		for _, m := range orderMasks {
			out = m.ReplaceAllString(out, "<masked>")
		}
		fmt.Fprintf(&b, "## %s\n%s", strings.Join(args, " "), out)
	}
	return b.String()
}

// TestReportsIgnoreIngestOrder: the same traces give the same reports
// whatever order they were ingested in (the README's "Ingest guarantees":
// ids follow the ingest order, tie-breaks never do): both runs in one
// ingest with one job, r's files first (path order: r's directory sorts
// before x's), the runs tagged after; or x first, then r in two ingests,
// the second with two jobs.
func TestReportsIgnoreIngestOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeOrderFixture(t, dir)
	file := func(i int) string { return filepath.Join(dir, orderFiles[i].path()) }
	r := []string{"--run", "r", "--tag", "seq=2"}
	rAppend := append([]string{"--append"}, r...)
	x := []string{"ingest", "--run", "x", "--tag", "seq=1", file(4)}
	cases := []struct {
		name   string
		stores [][]string
	}{
		// the runs labelled by their directories, as --run labels them
		{"r-then-x", [][]string{{"ingest", "--jobs", "1", dir}, {"tag", "r", "seq=2"}, {"tag", "x", "seq=1"}}},
		// x first (its names in the order of window 1), then rank 0's
		// window 1, then the others with two jobs: rank 0's windows the
		// other way round, rank 1's not (unless the loaders swap them)
		{"x-then-r-in-two", [][]string{x, append([]string{"ingest", file(2)}, r...),
			append([]string{"ingest", "--jobs", "2", file(0), file(1), file(3)}, rAppend...)}},
	}
	got := make([]string, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(c.name, func(t *testing.T) { got[i] = orderReports(t, c.stores) })
		}()
	}
	wg.Wait()
	for i := 1; i < len(cases); i++ {
		if got[i] != got[0] {
			t.Errorf("reports after %s differ from those after %s:\n%s", cases[i].name, cases[0].name, orderDiff(got[i], got[0]))
		}
	}
}

// orderDiff lists the first lines (by number) where got and want differ.
func orderDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var out []string
	for i := 0; i < max(len(g), len(w)) && len(out) < 12; i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			out = append(out, fmt.Sprintf("line %d: %q, want %q", i+1, a, b))
		}
	}
	return strings.Join(out, "\n")
}
