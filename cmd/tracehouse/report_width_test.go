package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivo/uniseg"
)

// TestReportMessagesFitTheWidth (issue 34 item 4, "report's text"): what
// report prints on stderr, its progress and the files it wrote, wraps to
// the text width like every other message; the line naming a report
// written deep in a directory ran past 80 columns.
func TestReportMessagesFitTheWidth(t *testing.T) {
	t.Parallel()
	db := demoCopy(t)
	dir := filepath.Join(t.TempDir(), "reports-of-the-nightly-serving-benchmark", "sglang-llama-3.1-8b-instruct-tp2")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := filepath.Join(dir, "the-markdown-report-for-the-pull-request.md")
	io, _, errOut := testIO("")
	env := func(k string) string {
		if k == "COLUMNS" {
			return "80"
		}
		return testEnv(k)
	}
	if code := run([]string{"--db", db, "report", "--markdown", md, "sglang-llama"}, io, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(md); err != nil {
		t.Fatal(err)
	}
	stderr := errOut.String()
	if !strings.Contains(stderr, "report: [1/1] sglang-llama\n") || !strings.Contains(stderr, "wrote") {
		t.Errorf("stderr does not say what report did:\n%s", stderr)
	}
	// Unwrapped, the line would have been this wide.
	if w := len("wrote " + md + " (1.0 KiB)"); w <= 80 {
		t.Fatalf("the path is too short to test anything: %d", w)
	}
	for i, l := range strings.Split(stderr, "\n") {
		if w := uniseg.StringWidth(l); w > 80 {
			t.Errorf("line %d is %d wide: %q", i+1, w, l)
		}
	}
}
