package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/nsys/nsystest"
	"github.com/tracehouse/tracehouse/synth"
)

// writeNsysRun writes TestNsysIngestThenRuns' Nsight export, of a synthetic
// SGLang decode, as dir/nsys-run/decode/profile-TP-0.sqlite, and returns
// dir/nsys-run.
func writeNsysRun(dir string) (string, error) {
	m, err := synth.Generate(synth.Options{Framework: synth.SGLang, Dir: dir, Run: "k", Stage: synth.StageDecode, Steps: 2, Layers: 2, Seed: 3})
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "nsys-run", "decode", "profile-TP-0.sqlite")
	if err := nsystest.FromKineto(m.Files[0].Path, out, nsystest.Recent); err != nil {
		return "", err
	}
	return filepath.Join(dir, "nsys-run"), nil
}

// TestNsysIngestThenRuns: an Nsight export of a synthetic SGLang decode
// ingests from the command line, as one run, `runs` names its source
// format, and triage reports it like a torch trace. (The ingest is
// badInput's next one, into a warehouse holding three runs before, with
// another directory.)
func TestNsysIngestThenRuns(t *testing.T) {
	t.Parallel()
	b := badInputOnce(t)
	if b.nextCode != 0 {
		t.Fatalf("ingest exit %d: %s", b.nextCode, b.nextErr)
	}
	var runs []runJSON
	if err := json.Unmarshal([]byte(b.runsJSON), &runs); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range runs {
		labels = append(labels, r.Label)
	}
	// the runs stored before, copies (of one trace: two copies given,
	// TestSameContentTwiceInOneIngest), and the export's as one more
	slices.Sort(labels)
	if want := []string{"copies", "counted", "nsys-run", "traces", "trtllm-llama"}; !slices.Equal(labels, want) {
		t.Fatalf("runs %q, want %q", labels, want)
	}
	if i := slices.IndexFunc(runs, func(r runJSON) bool { return r.Label == "copies" }); runs[i].Traces != 1 {
		t.Errorf("run copies holds %d traces, want 1: %+v", runs[i].Traces, runs[i])
	}
	i := slices.IndexFunc(runs, func(r runJSON) bool { return r.Label == "nsys-run" })
	if !reflect.DeepEqual(runs[i].Formats, []string{"nsys"}) || !reflect.DeepEqual(runs[i].Stages, []string{"decode"}) {
		t.Errorf("runs: %+v", runs[i])
	}
	var row string
	for _, l := range strings.Split(b.runsTable, "\n") {
		if strings.HasPrefix(l, "nsys-run ") {
			row = l
		}
	}
	if !strings.Contains(b.runsTable, "Format") || !slices.Contains(strings.Fields(row), "nsys") {
		t.Errorf("runs text, no nsys-run row naming nsys: %s", b.runsTable)
	}
	if b.triageCode[1] != 0 || !strings.Contains(b.triageOut[1], "decode") {
		t.Errorf("triage exit %d: %s %s", b.triageCode[1], b.triageOut[1], b.triageErr[1])
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
