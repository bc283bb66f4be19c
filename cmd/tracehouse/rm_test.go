package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dustin/go-humanize"
)

// TestRmCompacts (issue 36 item 16, issue 38): rm compacts the file and
// says what it reclaimed, in the sizes the file had before and after;
// --no-compact leaves the file at least as large as it was. What stays
// reads as before.
func TestRmCompacts(t *testing.T) {
	t.Parallel()
	size := func(path string) int64 {
		t.Helper()
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	runsOf := func(db string) string {
		t.Helper()
		code, out, errOut := runCmd(t, "--db", db, "--format", "csv", "runs")
		if code != 0 {
			t.Fatalf("runs: exit %d %s", code, errOut)
		}
		return out
	}

	kept := llamaCopy(t) // sglang-llama and trtllm-llama
	before := size(kept)
	code, _, errOut := runCmd(t, "--db", kept, "rm", "--no-compact", "sglang-llama")
	if code != 0 || strings.Contains(errOut, "compacted") {
		t.Fatalf("rm --no-compact: exit %d %q", code, errOut)
	}
	if got := size(kept); got < before {
		t.Errorf("rm --no-compact: the file shrank %d -> %d bytes (DuckDB keeps deleted rows' space: nothing to show compaction against)", before, got)
	}

	db := llamaCopy(t)
	before = size(db)
	code, _, errOut = runCmd(t, "--db", db, "rm", "sglang-llama")
	if code != 0 || !strings.Contains(errOut, "removed run sglang-llama (4 trace(s))") {
		t.Fatalf("rm: exit %d %q", code, errOut)
	}
	after := size(db)
	// The reference: a new warehouse holding trtllm-llama alone (the
	// schema, catalog and SQL library are most of a file this small).
	fresh := trtllmTemplate(t) // (read only: its size)
	if after >= before || after > size(fresh)*11/10 {
		t.Errorf("rm: file %d -> %d bytes, want it smaller, and at most 10%% over a new warehouse of the run left (%d bytes)", before, after, size(fresh))
	}
	want := fmt.Sprintf("compacted %s: %s -> %s (%s reclaimed)\n", db,
		humanize.Bytes(uint64(before)), humanize.Bytes(uint64(after)), humanize.Bytes(uint64(before-after)))
	if !strings.HasSuffix(unwrap(errOut), want) {
		t.Errorf("rm said:\n%s\nwant it to end with:\n%s", errOut, want)
	}
	if left, _ := os.ReadDir(filepath.Dir(db)); len(left) != 1 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("beside the warehouse after rm: %v, want the file alone", names)
	}
	// Both warehouses hold trtllm-llama alone, listed alike (copies of one
	// warehouse, the same run removed).
	if a, b := runsOf(db), runsOf(kept); a != b || !regexp.MustCompile(`(?m)^trtllm-llama,`).MatchString(a) || strings.Count(a, "\n") != 2 {
		t.Errorf("runs after the compacting rm:\n%s\nafter rm --no-compact:\n%s", a, b)
	}
	// The compacted warehouse takes a run again (sglang-llama, removed
	// above), and --replace loads a stored file again, replacing its rows
	// rather than adding to them (trtllm-llama's one trace, under a new
	// trace id): in one ingest. (TestReplaceReingests held the replace on
	// a new warehouse of trtllm-llama alone.)
	trtllm := func() string {
		t.Helper()
		code, out, errOut := runCmd(t, "--db", db, "--format", "csv", "sql",
			`SELECT (SELECT count(*) FROM traces) AS traces, count(DISTINCT trace_id) AS trtllm_traces, count(*) AS trtllm_kernels,
			   min(trace_id) AS id FROM kernels JOIN runs r USING (run_id) WHERE r.label = 'trtllm-llama'`)
		if code != 0 {
			t.Fatalf("sql: exit %d %s", code, errOut)
		}
		return out
	}
	was := trtllm()
	code, _, errOut = runCmd(t, "--db", db, "ingest", "--replace", "../../testdata/demo/sglang-llama", "../../testdata/demo/trtllm-llama")
	if code != 0 || !strings.Contains(errOut, "ingested 5 file(s)") {
		t.Fatalf("ingest --replace after compaction: exit %d %s", code, errOut)
	}
	id := func(s string) string { return s[strings.LastIndexByte(strings.TrimSpace(s), ',')+1:] }
	if after := trtllm(); !strings.HasPrefix(was, "traces,trtllm_traces,trtllm_kernels,id\n1,1,235,") ||
		!strings.HasPrefix(after, "traces,trtllm_traces,trtllm_kernels,id\n5,1,235,") || id(after) == id(was) {
		t.Errorf("trtllm-llama's trace before the ingest:\n%safter (--replace):\n%swant 235 kernels of one trace, under a new id, beside sglang-llama's 4", was, after)
	}
}
