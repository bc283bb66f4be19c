package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/nsys/nsystest"
	"github.com/tracehouse/tracehouse/synth"
)

// TestNsysIngestThenRuns: an Nsight export of a synthetic SGLang decode
// ingests from the command line, `runs` names its source format, and
// triage reports it like a torch trace.
func TestNsysIngestThenRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m, err := synth.Generate(synth.Options{Framework: synth.SGLang, Dir: dir, Run: "k", Stage: synth.StageDecode, Steps: 2, Layers: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "nsys-run", "decode", "profile-TP-0.sqlite")
	if err := nsystest.FromKineto(m.Files[0].Path, out, nsystest.Recent); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "w.duckdb")
	if code, _, stderr := runCmd(t, "--db", db, "ingest", filepath.Join(dir, "nsys-run")); code != 0 {
		t.Fatalf("ingest exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCmd(t, "--db", db, "--format", "json", "runs")
	if code != 0 {
		t.Fatalf("runs exit %d: %s", code, stderr)
	}
	var runs []runJSON
	if err := json.Unmarshal([]byte(stdout), &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || !reflect.DeepEqual(runs[0].Formats, []string{"nsys"}) || !reflect.DeepEqual(runs[0].Stages, []string{"decode"}) {
		t.Errorf("runs: %+v", runs)
	}
	code, stdout, _ = runCmd(t, "--db", db, "runs")
	if code != 0 || !strings.Contains(stdout, "Format") || !strings.Contains(stdout, "nsys") {
		t.Errorf("runs text: %s", stdout)
	}
	code, stdout, stderr = runCmd(t, "--db", db, "triage", runs[0].Label)
	if code != 0 || !strings.Contains(stdout, "decode") {
		t.Errorf("triage exit %d: %s %s", code, stdout, stderr)
	}
}

// TestNamedNsysReportWithoutNsysFails: an .nsys-rep named on the command
// line that cannot be exported (no nsys on PATH) is an error, exit 1,
// naming the file and the command to run; found in a directory, it is a
// note and exit 0. (Not parallel: it empties PATH.)
func TestNamedNsysReportWithoutNsysFails(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", filepath.Join(dir, "empty"))
	rep := filepath.Join(dir, "rep", "profile.nsys-rep")
	if err := os.MkdirAll(filepath.Dir(rep), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rep, []byte("an nsys report"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "w.duckdb")
	code, _, stderr := runCmd(t, "--db", db, "ingest", rep)
	if code != 1 || !strings.Contains(stderr, "error: "+rep+": Nsight Systems report not ingested: nsys is not on PATH; export it with `nsys export") ||
		!strings.Contains(stderr, "ingested 0 file(s) (0 events, 0 GPU events, 0.0 MB of JSON), 1 failed\n") {
		t.Errorf("named: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCmd(t, "--db", db, "ingest", filepath.Dir(rep))
	// notes wrap to the width: read them as one line
	if code != 0 || !strings.Contains(unwrapped(stderr), "note: "+rep+": Nsight Systems report skipped: nsys is not on PATH") {
		t.Errorf("found: exit %d, stderr %q", code, stderr)
	}
}
