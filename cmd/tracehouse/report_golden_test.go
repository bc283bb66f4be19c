package main

import (
	"fmt"
	"testing"
)

// TestReportGoldenDemo holds `report` on two of the demo's runs, with a
// comparison and a history section, to its golden files in both formats:
// every figure of the page comes from the SQL library's macros and views
// (through the triage, compare and history queries), so a change to them
// shows its diff here. `go test ./cmd/tracehouse -run Golden -update`
// rewrites them.
func TestReportGoldenDemo(t *testing.T) {
	t.Parallel()
	db := demoCopy(t)
	args := []string{"--compare", "sglang-llama,sglang-formal", "--history", "--metric step_time", "sglang-llama", "sglang-formal"}
	for _, f := range []string{"markdown", "html"} {
		code, out, stderr := runCmd(t, append([]string{"--db", db, "report", "--" + f, "-"}, args...)...)
		if code != 0 {
			t.Fatalf("report --%s: exit %d: %s", f, code, stderr)
		}
		golden(t, "report-demo."+f, maskTimes(out))
	}
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
