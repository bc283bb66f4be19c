package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestReportGoldenDemo holds `report` on two of the demo's runs, with a
// comparison and a history section, to its golden files in both formats:
// every figure of the page comes from the SQL library's macros and views
// (through the triage, compare and history queries), so a change to them
// shows its diff here. `go test ./cmd/tracehouse -run Golden -update`
// rewrites them. One command writes both, as a user asking for both gets
// them: the markdown to standard output, the page to a file.
func TestReportGoldenDemo(t *testing.T) {
	t.Parallel()
	db := demoCopy(t)
	page := filepath.Join(t.TempDir(), "report.html")
	code, out, stderr := runCmd(t, "--db", db, "report", "--markdown", "-", "--html", page,
		"--compare", "sglang-llama,sglang-formal", "--history", "--metric step_time", "sglang-llama", "sglang-formal")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	golden(t, "report-demo.markdown", maskTimes(out))
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "report-demo.html", maskTimes(string(html)))
}

// TestSchemaGoldenDemo holds what `schema` lists (every public table, view
// and macro with its description) and the parameters or columns of a
// public macro and view to golden files: the names and descriptions users
// see must not move with the SQL library's files.
func TestSchemaGoldenDemo(t *testing.T) {
	t.Parallel()
	db := demoCopy(t)
	for _, c := range []struct{ name, object string }{
		{"schema-objects", ""},
		{"schema-overlap-kernels", "overlap_kernels"},
		{"schema-kernel-events", "kernel_events"},
	} {
		args := []string{"--db", db, "--format", "markdown", "schema"}
		if c.object != "" {
			args = append(args, c.object)
		}
		code, out, stderr := runCmd(t, args...)
		if code != 0 {
			t.Fatalf("schema %s: exit %d: %s", c.object, code, stderr)
		}
		golden(t, fmt.Sprintf("%s.markdown", c.name), out)
	}
}
