package main

import (
	"encoding/json"
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
