package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/tracehouse/tracehouse/assemble"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema/schematest"
	"github.com/tracehouse/tracehouse/target"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden with the output the tests get")

// TestMain plays the role a subprocess test gave this binary, if any, and
// removes the warehouse templates the tests copy when they end.
func TestMain(m *testing.M) {
	playRole()
	os.Exit(schematest.Main(m))
}

// testEnv is the environment commands see in tests: DuckDB on one thread
// per warehouse, as schematest's copies. The tests run commands in-process
// two at a time, beside other packages' tests, on warehouses of a few MB,
// where a second thread per warehouse adds only coordination.
func testEnv(key string) string {
	if key == "TRACEHOUSE_THREADS" {
		return "1"
	}
	return ""
}

// golden compares got with testdata/golden/name, or writes it there with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -run '%s' -update rewrites it):\n%s", path, t.Name(), firstDiff(got, string(want)))
	}
}

// firstDiff shows the first line where got and want differ, with the lines
// before it.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	var b strings.Builder
	for j := max(0, i-3); j < i; j++ {
		fmt.Fprintf(&b, "   %s\n", g[j])
	}
	line := func(s []string) string {
		if i < len(s) {
			return s[i]
		}
		return "(end)"
	}
	fmt.Fprintf(&b, "line %d:\n - %s\n + %s", i+1, line(w), line(g))
	return b.String()
}

// csvArchive lists the CSV files of dir as one txtar archive, by name.
func csvArchive(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ar txtar.Archive
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		ar.Files = append(ar.Files, txtar.File{Name: e.Name(), Data: b})
	}
	sort.Slice(ar.Files, func(i, j int) bool { return ar.Files[i].Name < ar.Files[j].Name })
	return string(txtar.Format(&ar))
}

// demoIngest is what `triage testdata/demo --format json` printed when it
// ingested the demo into the template warehouse.
var demoIngest struct {
	code        int
	out, errOut string
}

// demoTemplate is testdata/demo ingested once per test binary through
// `triage PATH` itself. Tests open copies of it (demoCopy).
func demoTemplate(t *testing.T) string {
	t.Helper()
	return schematest.TemplateFile(t, "demo", func(path string) error {
		code, out, errOut := runTriage(path, demoDir, "--format", "json")
		demoIngest.code, demoIngest.out, demoIngest.errOut = code, out, errOut
		if code != 0 {
			return fmt.Errorf("triage %s: exit %d: %s", demoDir, code, errOut)
		}
		return nil
	})
}

// demoCopy is a copy of the demo warehouse for t alone: tests may write to
// it, and run in parallel.
func demoCopy(t *testing.T) string {
	t.Helper()
	return schematest.Copy(t, demoTemplate(t))
}

// llamaArgs is the ingest llamaTemplate runs: two of the demo's runs,
// tagged gpu=h100.
var llamaArgs = []string{"ingest", "--tag", "gpu=h100", demoDir + "/sglang-llama", demoDir + "/trtllm-llama"}

// llamaTemplate is the warehouse of `ingest` llamaArgs, built once per test
// binary. Tests open copies of it (llamaCopy).
func llamaTemplate(t *testing.T) string {
	t.Helper()
	return schematest.TemplateFile(t, "llama", func(path string) error {
		io, _, errOut := testIO("")
		if code := run(append([]string{"--db", path}, llamaArgs...), io, testEnv); code != 0 {
			return fmt.Errorf("%v: exit %d: %s", llamaArgs, code, errOut)
		}
		return nil
	})
}

// llamaCopy is a copy of the llama warehouse for t alone.
func llamaCopy(t *testing.T) string {
	t.Helper()
	return schematest.Copy(t, llamaTemplate(t))
}

// trtllmArgs is the ingest trtllmTemplate runs: the demo's trtllm-llama
// alone (one trace), tagged gpu=h100 as in llamaArgs.
var trtllmArgs = []string{"ingest", "--tag", "gpu=h100", demoDir + "/trtllm-llama"}

// trtllmTemplate is the warehouse of `ingest` trtllmArgs into a new
// warehouse, built once per test binary: the tests that start from that
// run alone open copies of it (trtllmCopy), or read it.
func trtllmTemplate(t *testing.T) string {
	t.Helper()
	return schematest.TemplateFile(t, "trtllm", func(path string) error {
		io, _, errOut := testIO("")
		if code := run(append([]string{"--db", path}, trtllmArgs...), io, testEnv); code != 0 || !strings.Contains(errOut.String(), "ingested 1 file(s)") {
			return fmt.Errorf("%v: exit %d: %s", trtllmArgs, code, errOut)
		}
		return nil
	})
}

// trtllmCopy is a copy of the trtllm warehouse for t alone.
func trtllmCopy(t *testing.T) string {
	t.Helper()
	return schematest.Copy(t, trtllmTemplate(t))
}

// parseTriage parses a triage command line the way the command does, with
// --db db and --format format, and returns the options it would run with.
func parseTriage(t *testing.T, db, format string, args ...string) *TriageOptions {
	t.Helper()
	return parseCmd(t, db, format, newCmdTriage, args...)
}

// triageReports builds the reports of a triage command line once, by the
// command's own steps (open, resolve the targets, one report each), so that
// every format can render the same reports; stderr is what resolving the
// targets printed.
func triageReports(t *testing.T, db string, args ...string) (reps []*report.TriageReport, stderr string) {
	t.Helper()
	opts := parseTriage(t, db, "table", args...)
	io, _, errOut := testIO("")
	opts.IO = io
	cat, err := catalogFor(opts.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	write := false
	for _, a := range opts.Targets {
		write = write || target.IsPath(a)
	}
	w, err := target.Open(opts.Ctx, opts.Warehouse, write, cat, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	targets, ingestErr, err := triageTargets(opts, w, cat)
	if err != nil || ingestErr != nil {
		t.Fatalf("%v: %v %v", args, err, ingestErr)
	}
	for _, tg := range targets {
		rep, err := assemble.Triage(opts.Ctx, w, tg.run, tg.mapping, opts.Sections.triage(opts.Framework, opts.Timeline))
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	return reps, errOut.String()
}

// renderTriage writes reports the way `triage ARGS --format format` does:
// what it prints, and for csv the directory it writes to (--out).
func renderTriage(t *testing.T, reps []*report.TriageReport, format string, args ...string) (stdout, csvDir string) {
	t.Helper()
	if format == "csv" {
		csvDir = t.TempDir()
	}
	return printTriage(t, reps, format, csvDir, -1, args...), csvDir
}

// printTriage prints reports by triage's print step as `triage ARGS
// --format format` does, fitted to width (as $COLUMNS, or 0 for --wide,
// sets it; -1: the command line's own), its CSV files written to dir
// (--out) when dir is set.
func printTriage(t *testing.T, reps []*report.TriageReport, format, dir string, width int, args ...string) string {
	t.Helper()
	if dir != "" {
		args = append(slices.Clone(args), "--out", dir)
	}
	opts := parseTriage(t, "unused.duckdb", format, args...)
	io, out, _ := testIO("")
	opts.IO = io
	if width >= 0 {
		opts.Width = width
	}
	var csvDoc report.Doc
	for i, rep := range reps {
		if err := writeTriage(opts.common, opts.Format, i, rep, &csvDoc); err != nil {
			t.Fatal(err)
		}
	}
	if opts.Format == report.CSV {
		if _, err := report.RenderCSVDir(opts.Out, csvDoc); err != nil {
			t.Fatal(err)
		}
	}
	return out.String()
}
