package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestTagAndRunsFilter: tags set, replaced, removed and moved (a baseline),
// shown and filtered by runs, and selected by tag:KEY=VALUE.
func TestTagAndRunsFilter(t *testing.T) {
	t.Parallel()
	db := llamaCopy(t) // ingest --tag gpu=h100 of sglang-llama and trtllm-llama
	runsJSON := func(args ...string) map[string][]string {
		t.Helper()
		code, out, stderr := runCmd(t, append([]string{"--db", db, "--format", "json", "runs"}, args...)...)
		if code != 0 {
			t.Fatalf("runs %q: exit %d: %s", args, code, stderr)
		}
		var rs []runJSON
		if err := json.Unmarshal([]byte(out), &rs); err != nil {
			t.Fatal(err)
		}
		m := map[string][]string{}
		for _, r := range rs {
			m[r.Label] = r.Tags
		}
		return m
	}
	tag := func(wantCode int, args ...string) string {
		t.Helper()
		code, _, stderr := runCmd(t, append([]string{"--db", db, "tag"}, args...)...)
		if code != wantCode {
			t.Fatalf("tag %q: exit %d, want %d: %s", args, code, wantCode, stderr)
		}
		return stderr
	}

	if got := tag(0, "trtllm-llama", "baseline=true", "commit=abc"); got != "run trtllm-llama: baseline=true commit=abc gpu=h100\n" {
		t.Errorf("tag: %q", got)
	}
	tag(0, "sglang-llama", "baseline=true", "commit=def")
	if got := runsJSON("--tag", "baseline=true"); len(got) != 2 {
		t.Errorf("without --move both carry the baseline: %v", got)
	}
	// --move makes trtllm-llama the only baseline.
	if got := tag(0, "trtllm-llama", "baseline=true", "--move"); !strings.Contains(got, "moved from sglang-llama\n") {
		t.Errorf("move: %q", got)
	}
	want := map[string][]string{"trtllm-llama": {"baseline=true", "commit=abc", "gpu=h100"}}
	if got := runsJSON("--tag", "baseline=true", "--tag", "gpu=h100"); !equalTags(got, want) {
		t.Errorf("runs --tag baseline=true --tag gpu=h100: %v, want %v", got, want)
	}
	// The selector resolves to the moved baseline; --rm on it.
	if got := tag(0, "tag:baseline=true", "--rm", "gpu", "--rm", "nope"); got != "note: run trtllm-llama has no tag nope\nrun trtllm-llama: baseline=true commit=abc\n" {
		t.Errorf("rm through a selector: %q", got)
	}
	want = map[string][]string{"trtllm-llama": {"baseline=true", "commit=abc"}, "sglang-llama": {"commit=def", "gpu=h100"}}
	if got := runsJSON(); !equalTags(got, want) {
		t.Errorf("runs: %v, want %v", got, want)
	}
	code, out, _ := runCmd(t, "--db", db, "runs", "--tag", "baseline=true", "--tag", "commit=def")
	if code != 0 || strings.TrimSpace(out) != "no run carries baseline=true and commit=def" {
		t.Errorf("runs with no match: exit %d %q", code, out)
	}
	code, out, _ = runCmd(t, "--db", db, "--wide", "runs")
	if code != 0 || !strings.Contains(strings.Split(out, "\n")[0], "Tags") || !strings.Contains(out, "commit=def gpu=h100") {
		t.Errorf("runs table shows no tags:\n%s", out)
	}

	// Usage errors change nothing; a path is never ingested.
	for _, args := range [][]string{{"sglang-llama"}, {"sglang-llama", "novalue"}, {"sglang-llama", "a=1", "--rm", "a"},
		{"sglang-llama", "--move", "--rm", "commit"}, {"sglang-llama", "=1"}} {
		tag(2, args...)
	}
	if got := tag(1, "nope", "a=1"); !strings.Contains(got, `no run labelled "nope"`) {
		t.Errorf("unknown run: %q", got)
	}
	tag(1, "../../testdata/demo/vllm-qwen-moe", "a=1")
	if code, _, _ := runCmd(t, "--db", db, "runs", "--tag", "nokey"); code != 2 {
		t.Errorf("runs --tag nokey: exit %d, want 2", code)
	}
	if got := runsJSON(); len(got) != 2 {
		t.Errorf("runs after the failures: %v", got)
	}
}

func equalTags(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestTagFitsTheWidth: what tag prints wraps to the width (issue 34 item
// 4): long tags at 80 columns, every tag still there.
func TestTagFitsTheWidth(t *testing.T) {
	t.Parallel()
	db := llamaCopy(t)
	env := func(k string) string {
		if k == "COLUMNS" {
			return "80"
		}
		return testEnv(k)
	}
	io, _, errOut := testIO("")
	tags := []string{"team=serving-infrastructure", "note=baseline-before-the-flashinfer-upgrade-of-july", "commit=5f3c2a9e1d7b4c6a8e0f2d4b6a8c0e2f4a6b8d0c"}
	if code := run(append([]string{"--db", db, "tag", "sglang-llama"}, tags...), io, env); code != 0 {
		t.Fatalf("tag: exit %d: %s", code, errOut)
	}
	got := errOut.String()
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if len([]rune(l)) > 80 {
			t.Errorf("line of %d: %q", len([]rune(l)), l)
		}
	}
	for _, tg := range append(tags, "gpu=h100") {
		if !strings.Contains(strings.Join(strings.Fields(got), " "), tg) {
			t.Errorf("%s missing from\n%s", tg, got)
		}
	}
}
