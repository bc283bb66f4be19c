package main

import (
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestFlagsThatDoNothingSaySo: --format on a command that prints no table
// is a usage error naming the command (it used to be ignored); an unknown
// shell for completion and a mistyped command are usage errors, the latter
// with a suggestion.
func TestFlagsThatDoNothingSaySo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "w.duckdb")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", db, "--format", "json", "ingest", dir}, "tracehouse: --format does not apply to 'tracehouse ingest': it prints no table\n"},
		{[]string{"--db", db, "--format", "csv", "export", "--lake", dir}, "tracehouse: --format does not apply to 'tracehouse export': it prints no table\n"},
		{[]string{"--db", db, "--format", "json", "tag", "r", "k=v"}, "tracehouse: --format does not apply to 'tracehouse tag': it prints no table\n"},
		{[]string{"--format", "json", "version"}, "tracehouse: --format does not apply to 'tracehouse version': it prints no table\n"},
		{[]string{"--db", db, "--format", "json", "rm", "r"}, "tracehouse: --format does not apply to 'tracehouse rm': it prints no table\n"},
		{[]string{"--format", "json", "completion", "bash"}, "tracehouse: --format does not apply to 'tracehouse completion bash': it prints no table\n"},
		{[]string{"completion", "tcsh"}, "tracehouse: unknown command \"tcsh\" for \"tracehouse completion\"; did you mean bash or fish or zsh?\n"}, // in the help's (sorted) order
		{[]string{"triag"}, "tracehouse: unknown command \"triag\" for \"tracehouse\"; did you mean tag or triage?\n"},
		{[]string{"catalog", "lst"}, "tracehouse: unknown command \"lst\" for \"tracehouse catalog\"; did you mean list?\n"},
	} {
		code, out, stderr := runCmd(t, c.args...)
		if code != 2 || out != "" || !strings.HasPrefix(stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q\nwant exit 2, %q", c.args, code, out, stderr, c.want)
		}
	}
	// Where it applies, --format still works.
	if code, out, stderr := runCmd(t, "--format", "json", "catalog", "list"); code != 0 || !strings.HasPrefix(out, "[") {
		t.Errorf("catalog list --format json: exit %d %q %q", code, out[:min(len(out), 40)], stderr)
	}
	if code, out, _ := runCmd(t, "completion", "bash"); code != 0 || !strings.Contains(out, "bash completion") {
		t.Errorf("completion bash: exit %d", code)
	}
}

// TestVersionFlag: `tracehouse --version` prints the version and commit
// like `tracehouse version` (issue 36 item 17: it was an unknown flag).
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	code, out, stderr := runCmd(t, "--version")
	ver, commit := buildVersion(debug.ReadBuildInfo())
	if want := "tracehouse " + ver + "\ncommit " + commit + "\n"; code != 0 || out != want {
		t.Errorf("--version: exit %d, stdout %q (want %q), stderr %q", code, out, want, stderr)
	}
}
