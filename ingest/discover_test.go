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
