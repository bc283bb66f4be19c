package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNamedNonTraceFails: a file named on the command line that is not a
// trace is an error (exit 1, one line naming it); found in a directory
// scan it is skipped with a note (exit 0). Nothing is stored either way.
func TestNamedNonTraceFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"a": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "w.duckdb")
	code, _, stderr := runCmd(t, "--db", db, "ingest", other)
	if code != 1 || !strings.Contains(stderr, "error: "+other+": not a trace (no traceEvents array)") {
		t.Errorf("named: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCmd(t, "--db", db, "ingest", dir)
	if code != 0 || !strings.Contains(stderr, "note: "+other+": not a trace (no traceEvents array), skipped") {
		t.Errorf("scanned: exit %d, stderr %q", code, stderr)
	}
	code, out, _ := runCmd(t, "--db", db, "--format", "csv", "sql", "SELECT count(*) AS n FROM traces")
	if code != 0 || out != "n\n0\n" {
		t.Errorf("traces stored: %q", out)
	}
}
