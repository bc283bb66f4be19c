package main

import (
	"bufio"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/nsys/nsystest"
	"github.com/tracehouse/tracehouse/synth"
)

// nightly writes one night's SGLang decode capture into dir/traces (the
// directory a CI job fills each night), replacing what was there.
func nightly(t *testing.T, dir string, seed int64, edits ...synth.Edit) []synth.File {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, "traces")); err != nil {
		t.Fatal(err)
	}
	m, err := synth.Generate(synth.Options{Dir: dir, Run: "traces", Framework: synth.SGLang, Stage: synth.StageDecode,
		Seed: seed, Steps: 16, Noise: 0.02, BatchSize: 32, Edits: edits})
	if err != nil {
		t.Fatal(err)
	}
	return m.Files
}

// runsOf lists the warehouse's runs: label -> tags and trace count.
func runsOf(t *testing.T, db string) map[string]runRow {
	t.Helper()
	code, out, errOut := runCmd(t, "--db", db, "--format", "json", "runs")
	if code != 0 {
		t.Fatalf("runs: exit %d: %s", code, errOut)
	}
	var rows []runRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("runs: %v: %s", err, out)
	}
	m := map[string]runRow{}
	for _, r := range rows {
		r.Tags = map[string]string{}
		for _, kv := range r.TagList {
			k, v, _ := strings.Cut(kv, "=")
			r.Tags[k] = v
		}
		m[r.Label] = r
	}
	return m
}

type runRow struct {
	Label   string   `json:"label"`
	TagList []string `json:"tags"`
	Traces  int      `json:"traces"`
	Tags    map[string]string
}

func labelsOf(m map[string]runRow) []string {
	var l []string
	for k := range m {
		l = append(l, k)
	}
	sort.Strings(l)
	return l
}

// TestNightlyCaptureIsItsOwnRun is the README's CI recipe, with the trace
// directory of the same name every night: the second night's capture is
// a run of its own (traces-2, with a note), the baseline keeps its tags,
// and the gate sees the slower kernel (issue 33 item 0). Its subtest
// ReadersNeverWrite reads the two nights' runs (testReadersNeverWrite).
func TestNightlyCaptureIsItsOwnRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(t.TempDir(), "w.duckdb")
	nightly(t, dir, 1)
	traces := filepath.Join(dir, "traces")
	if code, _, errOut := runCmd(t, "--db", db, "ingest", "--tag", "commit=1", traces); code != 0 {
		t.Fatalf("night 1: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCmd(t, "--db", db, "tag", "@latest", "baseline=true", "--move"); code != 0 {
		t.Fatalf("tag: exit %d: %s", code, errOut)
	}
	nightly(t, dir, 2, synth.Edit{Match: attentionMatch, Factor: 1.25})
	code, _, errOut := runCmd(t, "--db", db, "ingest", "--tag", "commit=2", traces)
	if code != 0 {
		t.Fatalf("night 2: exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "note: ") || !strings.Contains(unwrapped(errOut), "run traces is an earlier capture, so these traces are run traces-2") {
		t.Errorf("night 2 says nothing of the label it took: %q", errOut)
	}
	runs := runsOf(t, db)
	if got := labelsOf(runs); strings.Join(got, ",") != "traces,traces-2" {
		t.Fatalf("runs %v, want traces and traces-2", got)
	}
	if r := runs["traces"]; r.Traces != 1 || r.Tags["commit"] != "1" || r.Tags["baseline"] != "true" {
		t.Errorf("baseline run %+v: want 1 trace, commit=1, baseline=true", r)
	}
	if r := runs["traces-2"]; r.Traces != 1 || r.Tags["commit"] != "2" || r.Tags["baseline"] != "" {
		t.Errorf("night 2 run %+v: want 1 trace, commit=2", r)
	}
	code, _, errOut = runCmd(t, "--db", db, "compare", "tag:baseline=true", "@latest", "--fail-on-regression")
	if code != exitRegression {
		t.Errorf("compare tag:baseline=true @latest --fail-on-regression: exit %d, want 3: %s", code, errOut)
	}
	// The same directory again is the same capture: nothing new, no run.
	code, _, errOut = runCmd(t, "--db", db, "ingest", traces)
	if code != 0 || !strings.Contains(errOut, "1 already ingested") || strings.Contains(errOut, "traces-3") {
		t.Errorf("night 2 again: exit %d: %s", code, errOut)
	}
	if got := labelsOf(runsOf(t, db)); len(got) != 2 {
		t.Errorf("runs after ingesting night 2 again: %v", got)
	}
	// the two nights are the runs testReadersNeverWrite's readers read
	// (not one more ingest of two runs of their own)
	t.Run("ReadersNeverWrite", func(t *testing.T) { testReadersNeverWrite(t, db, "traces", "traces-2") })
}

// TestRunLabelJoinsOnlyWithAppend: a --run label an earlier capture holds
// is refused (exit 2, nothing stored) unless --append; the same files
// again under that label are the same capture. The earlier capture is
// trtllmCopy's run (the demo's trtllm-llama, one trace), not one more
// ingest: each ingest here names that run's label with --run, as it named
// a label of its own before.
func TestRunLabelJoinsOnlyWithAppend(t *testing.T) {
	t.Parallel()
	db := trtllmCopy(t)
	const n1 = "trtllm-llama"
	a := filepath.Join(demoDir, n1)
	b := filepath.Join(t.TempDir(), "b")
	if _, err := synth.Generate(synth.Options{Dir: b, Run: "cap", Framework: synth.SGLang, Stage: synth.StageDecode,
		Seed: 2, Steps: 6}); err != nil {
		t.Fatal(err)
	}
	// the same capture again: a no-op, not a refusal
	if code, _, errOut := runCmd(t, "--db", db, "ingest", "--run", n1, a); code != 0 || !strings.Contains(errOut, "1 already ingested") {
		t.Fatalf("ingest a again: exit %d: %s", code, errOut)
	}
	code, _, errOut := runCmd(t, "--db", db, "ingest", "--run", n1, b)
	if code != exitUsage || !strings.Contains(errOut, "run "+n1+" already holds traces of another capture") || !strings.Contains(errOut, "--append") {
		t.Fatalf("ingest b --run %s: exit %d, want 2: %s", n1, code, errOut)
	}
	if r := runsOf(t, db)[n1]; r.Traces != 1 {
		t.Fatalf("refused ingest stored something: %+v", r)
	}
	if code, _, errOut := runCmd(t, "--db", db, "ingest", "--append", b); code != exitUsage || !strings.Contains(errOut, "--run") {
		t.Errorf("--append without --run: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCmd(t, "--db", db, "ingest", "--run", n1, "--append", b); code != 0 {
		t.Fatalf("ingest b --run %s --append: exit %d: %s", n1, code, errOut)
	}
	if r := runsOf(t, db)[n1]; r.Traces != 2 {
		t.Errorf("after --append: %+v, want 2 traces", r)
	}
}

// TestComparePathsInOneDirectory: two trace files of one download folder
// compared by PATH are two runs (the second gets the next label), so a
// slower candidate fails the gate; the same file on both sides is refused.
func TestComparePathsInOneDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	folder := filepath.Join(dir, "t")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, side := range []struct {
		name  string
		seed  int64
		edits []synth.Edit
	}{{"a", 1, nil}, {"b", 2, []synth.Edit{{Factor: 1.5}}}} {
		m, err := synth.Generate(synth.Options{Dir: filepath.Join(dir, side.name), Run: "x", Framework: synth.SGLang,
			Stage: synth.StageDecode, Seed: side.seed, Steps: 16, Noise: 0.02, BatchSize: 32, Edits: side.edits})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(m.Files[0].Path, filepath.Join(folder, side.name+".trace.json.gz")); err != nil {
			t.Fatal(err)
		}
	}
	a, b := filepath.Join(folder, "a.trace.json.gz"), filepath.Join(folder, "b.trace.json.gz")
	code, _, errOut := runCmd(t, "--db", ":memory:", "compare", a, b, "--fail-on-regression")
	if code != exitRegression {
		t.Errorf("compare a b: exit %d, want 3: %s", code, errOut)
	}
	if !strings.Contains(errOut, "these traces are run t-2") {
		t.Errorf("compare a b: no note of the second run's label: %s", errOut)
	}
	code, _, errOut = runCmd(t, "--db", ":memory:", "compare", a, a)
	if code != exitUsage || !strings.Contains(errOut, "same run") {
		t.Errorf("compare a a: exit %d, want 2: %s", code, errOut)
	}
}

// TestSrtctlProfilesAreOneJob: srtctl's Nsight layout,
// logs/<job>/profiles/{prefill,decode}/*.sqlite, ingested as the README
// says (`ingest logs/job-42/profiles/`), is one run per job with both
// stages, not runs named prefill and decode (issue 36 item 6). Both jobs'
// directories go to one ingest (one finish): each path argument names its
// own files' runs (ingest's runDirOf, from that argument down), as it does
// alone.
func TestSrtctlProfilesAreOneJob(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "w.duckdb")
	var profiles []string
	for i, job := range []string{"job-42", "job-43"} {
		for _, stage := range []string{synth.StagePrefill, synth.StageDecode} {
			m, err := synth.Generate(synth.Options{Framework: synth.SGLang, Dir: filepath.Join(dir, "gen", job), Run: stage,
				Stage: stage, Steps: 2, Layers: 2, Seed: int64(10*i) + int64(len(stage))})
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "logs", job, "profiles", stage, "worker-TP-0.sqlite")
			if err := nsystest.FromKineto(m.Files[0].Path, out, nsystest.Recent); err != nil {
				t.Fatal(err)
			}
		}
		profiles = append(profiles, filepath.Join(dir, "logs", job, "profiles")+"/")
	}
	if code, _, errOut := runCmd(t, append([]string{"--db", db, "ingest"}, profiles...)...); code != 0 {
		t.Fatalf("ingest %v: exit %d: %s", profiles, code, errOut)
	}
	code, out, errOut := runCmd(t, "--db", db, "--format", "json", "runs")
	if code != 0 {
		t.Fatalf("runs: exit %d: %s", code, errOut)
	}
	var runs []runJSON
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range runs {
		got[r.Label] = strings.Join(r.Stages, ",")
	}
	want := map[string]string{"job-42": "decode,prefill", "job-43": "decode,prefill"}
	if len(got) != 2 || got["job-42"] != want["job-42"] || got["job-43"] != want["job-43"] {
		t.Errorf("runs (label: stages) %v, want %v", got, want)
	}
}

// TestOnlyIngestCreatesWarehouse: a command that does not ingest, given a
// warehouse path that does not exist, fails with one line and creates
// nothing (no file, no lake) (issue 36 item 7).
func TestOnlyIngestCreatesWarehouse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "typo.duckdb")
	lakeDir := filepath.Join(dir, "lake")
	for _, args := range [][]string{
		{"export", "--lake", lakeDir},
		{"reclassify"},
		{"tag", "r", "k=v"},
		{"rm", "r"},
		{"rename", "r", "s"},
		{"runs"},
		{"triage", "r"},
		{"compare", "r", "s"},
		{"history", "--metric", "step_time"},
		{"sql", "SELECT 1"},
	} {
		code, _, errOut := runCmd(t, append([]string{"--db", db}, args...)...)
		if code != exitError || !strings.Contains(errOut, "no warehouse at "+db) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, want 1 and one line 'no warehouse at %s': %q", args, code, db, errOut)
		}
		for _, p := range []string{db, db + ".wal", lakeDir} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%v created %s", args, p)
				os.RemoveAll(p)
			}
		}
	}
}

// TestNotAWarehouseIsRefused: --db naming a file that is not a tracehouse
// warehouse (a trace, a SQLite file, another DuckDB database) is refused by
// readers and by ingest with one line, and the file is left as it was
// (issue 36 items 9 and D).
func TestNotAWarehouseIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trace, err := os.ReadFile(filepath.Join(demoDir, "trtllm-llama", "trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"trace.json":    trace,
		"nsys.sqlite":   append([]byte("SQLite format 3\x00"), make([]byte, 4080)...),
		"short.duckdb":  []byte("DUCK"),
		"random.duckdb": []byte("0123456789abcdefghijklmnopqrstuvwxyz"),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	other := filepath.Join(dir, "other.duckdb")
	odb, err := sql.Open("duckdb", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := odb.Exec(`CREATE TABLE mine (x INTEGER); INSERT INTO mine VALUES (42)`); err != nil {
		t.Fatal(err)
	}
	odb.Close()
	ob, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	files["other.duckdb"] = ob
	for name, before := range files {
		path := filepath.Join(dir, name)
		for _, args := range [][]string{
			{"runs"},
			{"triage", "x"},
			{"ingest", filepath.Join(demoDir, "trtllm-llama")},
			{"tag", "x", "k=v"},
		} {
			code, _, errOut := runCmd(t, append([]string{"--db", path}, args...)...)
			if code != exitError || !strings.Contains(errOut, path+" is not a tracehouse warehouse") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("--db %s %v: exit %d, want 1 and one line '%s is not a tracehouse warehouse': %q", name, args, code, path, errOut)
			}
			after, err := os.ReadFile(path)
			if err != nil || string(after) != string(before) {
				t.Errorf("--db %s %v changed the file (%v)", name, args, err)
			}
		}
	}
}

// TestNoExtensionAutoInstall: DuckDB never installs or loads an extension
// on its own in a warehouse tracehouse opens (it would reach the network).
func TestNoExtensionAutoInstall(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCmd(t, "--db", ":memory:", "--format", "csv", "sql",
		"SELECT current_setting('autoinstall_known_extensions') AS install, current_setting('autoload_known_extensions') AS load")
	if code != 0 || strings.TrimSpace(out) != "install,load\nfalse,false" {
		t.Errorf("exit %d: %q %s", code, out, errOut)
	}
}

// addEmptyRun stores a run row without traces in db, as an ingest killed
// before any of its files landed leaves one.
func addEmptyRun(t *testing.T, db, label string) {
	t.Helper()
	raw, err := sql.Open("duckdb", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`INSERT INTO runs (run_id, label, source_dir, ingested_at, tags)
		VALUES (nextval('run_id_seq'), ?, '/killed', now()::TIMESTAMP + INTERVAL 1 HOUR, MAP {})`, label); err != nil {
		t.Fatal(err)
	}
}

// TestEmptyRunIsNotARun: a run without traces is refused by every reader
// with one line, and removed at the next writable open (issue 36 item 3).
func TestEmptyRunIsNotARun(t *testing.T) {
	t.Parallel()
	db := llamaCopy(t)
	addEmptyRun(t, db, "r1")
	for _, args := range [][]string{
		{"triage", "r1"},
		{"compare", "r1", "sglang-llama"},
		{"compare", "sglang-llama", "r1"},
		{"report", "--markdown", filepath.Join(t.TempDir(), "r.md"), "r1"},
	} {
		code, _, errOut := runCmd(t, append([]string{"--db", db}, args...)...)
		if code != exitError || !strings.Contains(errOut, "run r1 holds no traces") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, want 1 and one line 'run r1 holds no traces': %q", args, code, errOut)
		}
	}
	// @latest is the newest run holding traces, not the empty one
	if code, out, errOut := runCmd(t, "--db", db, "--format", "json", "compare", "@latest~1", "@latest"); code != 0 || strings.Contains(out, `"r1"`) {
		t.Errorf("compare @latest~1 @latest: exit %d: %s", code, errOut)
	}
	// any writing command removes it
	if code, _, errOut := runCmd(t, "--db", db, "tag", "sglang-llama", "k=v"); code != 0 {
		t.Fatalf("tag: exit %d: %s", code, errOut)
	}
	code, out, errOut := runCmd(t, "--db", db, "--format", "csv", "sql", "SELECT count(*) AS n FROM runs WHERE label = 'r1'")
	if code != 0 || strings.TrimSpace(out) != "n\n0" {
		t.Errorf("after a writable open: exit %d: %q %s", code, out, errOut)
	}
}

// holdReader keeps db open read-only in another process until t ends.
func holdReader(t *testing.T, db string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TRACEHOUSE_TEST_ROLE=hold", "TRACEHOUSE_HOLD_READ=1", "TRACEHOUSE_DB="+db)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("reader: %q", line)
	}
}

// fileSum is a digest of a file's bytes.
func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// testReadersNeverWrite: compare and history with --steps-by find the
// steps they are asked for without writing the warehouse (its file is
// byte for byte the same after, and they run while another process reads
// it); a plain compare after still reads the stored steps (issue 33 item
// 6); and over a lake, history --steps-by works too (issue 33 item 7).
// db holds SGLang decode runs base and cand (TestNightlyCaptureIsItsOwnRun's
// two nights), with step annotations and SoftMax kernels.
func testReadersNeverWrite(t *testing.T, db, base, cand string) {
	before := fileSum(t, db)
	holdReader(t, db)
	const by = "SoftMax"
	source := func(args ...string) ([]string, []string) {
		t.Helper()
		code, out, errOut := runCmd(t, append([]string{"--db", db, "--format", "json", "compare", base, cand}, args...)...)
		if code != 0 {
			t.Fatalf("compare %s %s %v: exit %d: %s", base, cand, args, code, errOut)
		}
		var r struct {
			Base, Candidate struct {
				StepSource []string `json:"step_source"`
			}
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r.Base.StepSource, r.Candidate.StepSource
	}
	if b, c := source("--steps-by", by); strings.Join(b, ",") != "kernel" || strings.Join(c, ",") != "kernel" {
		t.Errorf("compare --steps-by %s: step sources %v, %v; want kernel", by, b, c)
	}
	if code, _, errOut := runCmd(t, "--db", db, "history", "--metric", "step_time", "--steps-by", by); code != 0 {
		t.Errorf("history --steps-by: exit %d: %s", code, errOut)
	}
	if b, c := source(); strings.Join(b, ",") != "step_annotation" || strings.Join(c, ",") != "step_annotation" {
		t.Errorf("plain compare after --steps-by: step sources %v, %v; want the stored step_annotation", b, c)
	}
	if fileSum(t, db) != before {
		t.Errorf("the readers changed the warehouse file")
	}
	if _, err := os.Stat(db + ".wal"); err == nil {
		t.Errorf("the readers left a write-ahead log")
	}
	lakeDir := filepath.Join(t.TempDir(), "lake")
	if code, _, errOut := runCmd(t, "--db", db, "export", "--lake", lakeDir); code != 0 {
		t.Skipf("export --lake while a reader holds the warehouse: exit %d: %s", code, errOut)
	}
	for _, args := range [][]string{
		{"history", "--metric", "step_time", "--steps-by", by},
		{"compare", base, cand, "--steps-by", by},
	} {
		if code, _, errOut := runCmd(t, append([]string{"--lake", lakeDir}, args...)...); code != 0 {
			t.Errorf("--lake %v: exit %d: %s", args, code, errOut)
		}
	}
}

// runLabels lists the warehouse's runs, newest first (as @latest counts).
func runLabels(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, errOut := runCmd(t, append(args, "--format", "json", "runs")...)
	if code != 0 {
		t.Fatalf("runs: exit %d: %s", code, errOut)
	}
	var rows []runRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	var l []string
	for _, r := range rows {
		l = append(l, r.Label)
	}
	return l
}

// TestSelectorsEverywhere: every command that takes a RUN resolves
// @latest, @latest~N and tag:KEY=VALUE the way compare does (issue 33 item
// 7, issue 35 item 4).
func TestSelectorsEverywhere(t *testing.T) {
	t.Parallel()
	db := llamaCopy(t)
	labels := runLabels(t, "--db", db)
	if len(labels) != 2 {
		t.Fatalf("runs %v", labels)
	}
	latest, before := labels[0], labels[1]
	if code, _, errOut := runCmd(t, "--db", db, "tag", before, "side=base"); code != 0 {
		t.Fatalf("tag: exit %d: %s", code, errOut)
	}
	code, out, errOut := runCmd(t, "--db", db, "--format", "json", "triage", "@latest")
	if code != 0 || !strings.Contains(out, `"run": "`+latest+`"`) {
		t.Errorf("triage @latest: exit %d, want run %s: %s", code, latest, errOut)
	}
	code, out, errOut = runCmd(t, "--db", db, "--format", "json", "runs", "tag:side=base")
	if code != 0 || !strings.Contains(out, `"label": "`+before+`"`) {
		t.Errorf("runs tag:side=base: exit %d, want run %s: %s", code, before, errOut)
	}
	lakeDir := filepath.Join(t.TempDir(), "lake")
	if code, _, errOut := runCmd(t, "--db", db, "export", "--lake", lakeDir, "@latest~1"); code != 0 {
		t.Errorf("export @latest~1: exit %d: %s", code, errOut)
	} else if got := runLabels(t, "--lake", lakeDir); strings.Join(got, ",") != before {
		t.Errorf("export @latest~1 wrote runs %v, want %s", got, before)
	}
	if code, _, errOut := runCmd(t, "--db", db, "rename", "@latest", "renamed"); code != 0 {
		t.Errorf("rename @latest renamed: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCmd(t, "--db", db, "rm", "tag:side=base"); code != 0 {
		t.Errorf("rm tag:side=base: exit %d: %s", code, errOut)
	}
	if got := runLabels(t, "--db", db); strings.Join(got, ",") != "renamed" {
		t.Errorf("after rename @latest and rm tag:side=base: runs %v, want renamed", got)
	}
	// a selector naming no run removes nothing
	if code, _, errOut := runCmd(t, "--db", db, "rm", "renamed", "@latest~3"); code != exitError || !strings.Contains(errOut, "nothing removed") {
		t.Errorf("rm renamed @latest~3: exit %d: %s", code, errOut)
	}
	if got := runLabels(t, "--db", db); len(got) != 1 {
		t.Errorf("rm with a bad selector removed runs: %v", got)
	}
}

// TestLabelsNeverReadAsSelectors: where labels are made (ingest --run,
// rename, capture --run), one that begins with @ or tag: is refused, exit
// 2, and nothing is stored (issue 33 item 7).
func TestLabelsNeverReadAsSelectors(t *testing.T) {
	t.Parallel()
	db := llamaCopy(t)
	before := runLabels(t, "--db", db)
	for _, args := range [][]string{
		{"ingest", "--run", "@latest", filepath.Join(demoDir, "vllm-qwen-moe")},
		{"ingest", "--run", "tag:x=y", filepath.Join(demoDir, "vllm-qwen-moe")},
		{"rename", before[0], "@latest"},
		{"rename", "@latest", "tag:x=y"},
		{"rename", before[0], "@mine"},
		{"capture", "--url", "http://127.0.0.1:9", "--output-dir", t.TempDir(), "--run", "@latest"},
	} {
		code, _, errOut := runCmd(t, append([]string{"--db", db}, args...)...)
		if code != exitUsage || !strings.Contains(errOut, "never begin with @ or tag:") {
			t.Errorf("%v: exit %d, want 2: %s", args, code, errOut)
		}
	}
	if got := runLabels(t, "--db", db); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Errorf("runs %v after refused labels, want %v", got, before)
	}
}

// TestLakePolicy: every command that changes stored rows refuses --lake
// with exit 2 (tag used to print success and store nothing); reading
// commands give the same messages over a lake as over a warehouse (issue
// 33 item 7, issue 35 item 4).
func TestLakePolicy(t *testing.T) {
	t.Parallel()
	db := llamaCopy(t)
	lakeDir := filepath.Join(t.TempDir(), "lake")
	if code, _, errOut := runCmd(t, "--db", db, "export", "--lake", lakeDir); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	// (the labels from the warehouse: one open of the lake fewer)
	labels := runLabels(t, "--db", db)
	for _, args := range [][]string{
		{"tag", labels[0], "k=v"},
		{"tag", "@latest", "--rm", "gpu"},
		{"rm", labels[0]},
		{"rename", labels[0], "x"},
		{"reclassify"},
		{"capture", "--url", "http://127.0.0.1:9", "--output-dir", t.TempDir()},
	} {
		code, _, errOut := runCmd(t, append([]string{"--lake", lakeDir}, args...)...)
		if code != exitUsage || !strings.Contains(errOut, "a lake's traces never change") {
			t.Errorf("--lake %v: exit %d, want 2: %s", args, code, errOut)
		}
	}
	// selectors read the same runs over a lake as over the warehouse.
	// (The warehouse was asked for no change: a refused tag, rm or rename
	// of labels[0], the newest run, that reached the lake would show in
	// `runs @latest` there.)
	// Every command resolves a RUN by target.SelectRun (triage, compare and
	// report through target.Resolve): runs checks each selector's run over
	// the lake, report the path through Resolve and a report over a lake
	// nowhere else held to the warehouse's. (That triage and compare over
	// a lake print the warehouse's reports is TestLakeEndToEnd's; that
	// they take selectors, TestSelectorsEverywhere's and compare's.)
	for _, args := range [][]string{
		{"--format", "json", "runs", "@latest"},
		{"--format", "json", "runs", "@latest~1"},
		{"report", "--markdown", "-", "--stage", "decode", "@latest"},
	} {
		wc, wOut, wErr := runCmd(t, append([]string{"--db", db}, args...)...)
		lc, lOut, lErr := runCmd(t, append([]string{"--lake", lakeDir}, args...)...)
		if wc != 0 || lc != 0 || lOut != wOut || strings.Contains(lOut, "k=v") {
			t.Errorf("%v: warehouse exit %d %s; lake exit %d %s; same output: %v", args, wc, wErr, lc, lErr, lOut == wOut)
		}
	}
	for _, args := range [][]string{
		{"triage", "nosuch"},
		{"triage", "@latest~5"},
		{"runs", "nosuch"},
		{"runs", "tag:no=such"},
		{"compare", "nosuch", labels[0]},
		{"history", "--metric", "step_time", "--tag", "no=such"},
		{"history", "--metric", "step_time", "--steps-by", "SoftMax", "--tag", "no=such"},
	} {
		wc, _, wErr := runCmd(t, append([]string{"--db", db}, args...)...)
		lc, _, lErr := runCmd(t, append([]string{"--lake", lakeDir}, args...)...)
		if wc == 0 || lc != wc || strings.ReplaceAll(lErr, lakeDir, "W") != strings.ReplaceAll(wErr, db, "W") {
			t.Errorf("%v: warehouse exit %d %q; lake exit %d %q", args, wc, wErr, lc, lErr)
		}
	}
}

// TestEveryCommandStatesLakeAccess holds the lake policy to every command:
// each one that changes a warehouse's stored rows is marked writes (so
// target.CheckLake refuses it --lake), every other is not, and a new
// command fails here until it is listed (tag was once left unmarked and
// "tagged" a lake's throw-away copy; issue 33 item 7).
func TestEveryCommandStatesLakeAccess(t *testing.T) {
	t.Parallel()
	changesRows := map[string]bool{
		"tag": true, "rm": true, "rename": true, "reclassify": true, "capture": true,
		// ingest and export write a lake through package lake; the rest read
		"ingest": false, "export": false, "compact": false, "runs": false, "sql": false, "schema": false,
		"catalog": false, "catalog check": false, "catalog list": false, "catalog show": false,
		"triage": false, "compare": false, "report": false, "history": false,
		"synth": false, "perfetto-fix": false, "slice": false, "version": false,
	}
	io, _, _ := testIO("")
	root := newCmdRoot(&Factory{IO: io, Getenv: testEnv})
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() || c == root || c.Name() == "help" || c.Name() == "completion" || c.Parent() != nil && c.Parent().Name() == "completion" {
			return
		}
		name := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		seen[name] = true
		want, ok := changesRows[name]
		if !ok {
			t.Errorf("command %q: list it here, saying whether it changes stored rows", name)
			return
		}
		if got := c.Annotations[writesAnnotation] == "yes"; got != want {
			t.Errorf("command %q: marked writes %v, want %v", name, got, want)
		}
	}
	walk(root)
	for name := range changesRows {
		if !seen[name] {
			t.Errorf("command %q listed but not found", name)
		}
	}
}
