package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiscoverSkipsPerfettoCopies: a directory scan leaves out the copies
// perfetto-fix writes beside their input (they would store every event
// twice) and says so; named explicitly, such a file is taken.
func TestDiscoverSkipsPerfettoCopies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"a-TP-0.trace.json.gz", "a-TP-0.trace.perfetto.json.gz", "b.perfetto.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cands, notices, err := discover([]string{dir}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 1 || filepath.Base(cands[0].path) != "a-TP-0.trace.json.gz" {
		t.Errorf("candidates %+v", cands)
	}
	if len(notices) != 2 || !strings.Contains(notices[0], "perfetto-fix copy, skipped") {
		t.Errorf("notices %q", notices)
	}
	cands, _, err = discover([]string{filepath.Join(dir, "b.perfetto.json")}, false)
	if err != nil || len(cands) != 1 {
		t.Errorf("named copy: %v %+v", err, cands)
	}
}

// TestRunDirAboveStageDirs: stage directories, and a profiles directory
// above them (srtctl's logs/<job>/profiles/{prefill,decode}), are never the
// run, whichever directory or file is given (issue 36 item 6).
func TestRunDirAboveStageDirs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	job := filepath.Join(dir, "logs", "job-42")
	file := filepath.Join(job, "profiles", "decode", "r0.sqlite")
	sweep := filepath.Join(dir, "run_prefill_sweep")
	for _, c := range []struct {
		path, root string
		rootIsDir  bool
		want       string
	}{
		{file, filepath.Join(dir, "logs"), true, job},
		{file, job, true, job},
		{file, filepath.Join(job, "profiles"), true, job},
		{file, filepath.Join(job, "profiles", "decode"), true, job},
		{file, filepath.Dir(file), false, job},
		{filepath.Join(sweep, "decode", "x.json"), sweep, true, sweep},
		{filepath.Join(sweep, "Prefill", "x.json"), filepath.Join(sweep, "Prefill"), true, sweep},
		// a profiles directory of runs (not of stages) keeps naming them
		{filepath.Join(dir, "profiles", "run-a", "x.json"), filepath.Join(dir, "profiles"), true, filepath.Join(dir, "profiles", "run-a")},
		// a directory merely containing a stage word is a run
		{filepath.Join(dir, "decode-sweep", "x.json"), filepath.Join(dir, "decode-sweep"), true, filepath.Join(dir, "decode-sweep")},
	} {
		if got := runDirOf(c.path, c.root, c.rootIsDir); got != c.want {
			t.Errorf("runDirOf(%s, root %s) = %s, want %s", c.path, c.root, got, c.want)
		}
	}
}
