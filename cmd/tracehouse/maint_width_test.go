package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivo/uniseg"
)

// TestMaintenanceMessagesFitTheWidth (issue 34 item 4): what rename,
// export, compact, rm, perfetto-fix, slice and version print fits 80
// columns. They run on a copy of the demo kept deep in a directory, so
// that the lines naming a path or a label are wider than 80 unwrapped
// (checked: otherwise the test could not fail). No golden: the lines hold
// the test's temporary paths.
func TestMaintenanceMessagesFitTheWidth(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "nightly-serving-benchmarks-of-the-inference-team", "warehouses-kept-for-a-quarter")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(demoCopy(t))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "the-demo-warehouse-of-six-runs.duckdb")
	if err := os.WriteFile(db, b, 0o644); err != nil {
		t.Fatal(err)
	}
	lake := filepath.Join(dir, "the-parquet-lake-that-the-dashboards-read")
	trace := copyFile(t, "../../testdata/demo/trtllm-llama/trace.json", dir)
	env := func(k string) string {
		if k == "COLUMNS" {
			return "80"
		}
		return testEnv(k)
	}
	for _, c := range []struct {
		args []string
		long bool // a line is wider than 80 unwrapped
	}{
		{[]string{"--db", db, "rename", "sglang-llama", "sglang-llama-3.1-8b-instruct-tp2-before-the-flashinfer-upgrade"}, true},
		// (one run, the smallest: the lake's size does not change the
		// lines, and compact then merges one trace)
		{[]string{"--db", db, "export", "--lake", lake, "trtllm-llama"}, true},
		{[]string{"--lake", lake, "compact"}, true},
		{[]string{"--db", db, "rm", "trtllm-llama"}, true},
		{[]string{"perfetto-fix", trace}, true},
		{[]string{"slice", trace, "-o", filepath.Join(dir, "the-first-rank-of-the-trace.json.gz"), "--rank", "0"}, true},
		{[]string{"version"}, false},
	} {
		io, out, errOut := testIO("")
		if code := run(c.args, io, env); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		text := out.String() + errOut.String()
		if strings.TrimSpace(text) == "" {
			t.Errorf("%v printed nothing", c.args)
		}
		wider := false
		for _, l := range strings.Split(unwrap(text), "\n") {
			wider = wider || uniseg.StringWidth(l) > 80
		}
		if wider != c.long {
			t.Errorf("%v: a line wider than 80 unwrapped: %v, want %v (the test's paths no longer test the wrap):\n%s", c.args, wider, c.long, text)
		}
		for i, l := range strings.Split(text, "\n") {
			if w := uniseg.StringWidth(l); w > 80 {
				t.Errorf("%v: line %d is %d wide: %q", c.args, i+1, w, l)
			}
		}
	}
}
