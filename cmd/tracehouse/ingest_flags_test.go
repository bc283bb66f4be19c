package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The command names the flags behind the library's option errors.
func TestIngestOptionErrorsNameFlags(t *testing.T) {
	t.Parallel()
	code, _, stderr := runCmd(t, "--db", filepath.Join(t.TempDir(), "w.duckdb"), "ingest",
		"--stage", "warmup", "--framework", "tgi", "x")
	want := `tracehouse: --framework "tgi": want one of sglang, vllm, trtllm, tokenspeed --stage "warmup": want one of prefill, decode, mixed` + "\n"
	if code != 2 || !strings.HasPrefix(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
}
