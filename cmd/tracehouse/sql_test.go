package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSQLOutput: JSON keys in SELECT order without HTML escaping, MAP,
// LIST and STRUCT values as JSON in every format, and DuckDB's error
// layout (the caret line) kept.
func TestSQLOutput(t *testing.T) {
	t.Parallel()
	db := llamaCopy(t) // two runs tagged gpu=h100
	q := `SELECT 'a<b>&c' AS z, tags AS m, [3, 1] AS l, {'y': 2} AS s, 7 AS a FROM runs WHERE label = 'sglang-llama'`
	code, out, stderr := runCmd(t, "--db", db, "--format", "json", "sql", q)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `[
  {
    "z": "a<b>&c",
    "m": {
      "gpu": "h100"
    },
    "l": [
      3,
      1
    ],
    "s": {
      "y": 2
    },
    "a": 7
  }
]
`
	if out != want {
		t.Errorf("json:\n%s\nwant:\n%s", out, want)
	}
	code, out, _ = runCmd(t, "--db", db, "--format", "csv", "sql", q)
	if code != 0 || out != "z,m,l,s,a\na<b>&c,\"{\"\"gpu\"\":\"\"h100\"\"}\",\"[3,1]\",\"{\"\"y\"\":2}\",7\n" {
		t.Errorf("csv: %q", out)
	}

	code, _, stderr = runCmd(t, "--db", db, "sql", "SELECT nope FROM runs")
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if code != 1 || !strings.HasPrefix(lines[0], "tracehouse: sql: Binder Error") ||
		lines[len(lines)-2] != "LINE 1: SELECT nope FROM runs" || strings.TrimSpace(lines[len(lines)-1]) != "^" ||
		strings.Index(lines[len(lines)-1], "^") != strings.Index(lines[len(lines)-2], "nope") {
		t.Errorf("error layout: exit %d\n%s", code, stderr)
	}
}

// TestThreadsFromEnvironment: TRACEHOUSE_THREADS reaches DuckDB for a
// warehouse file, a throw-away warehouse and a lake (as the calling thread
// plus its workers, with at least three threads counted so that hash
// aggregates start small: schema.engineThreads); a value that is not a
// positive whole number is refused with its name.
func TestThreadsFromEnvironment(t *testing.T) {
	t.Parallel()
	db := demoCopy(t)
	lk := filepath.Join(t.TempDir(), "lake")
	if code, _, stderr := runCmd(t, "--db", db, "export", "--lake", lk, "trtllm-llama"); code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	for _, threads := range []string{"1", "3"} {
		env := func(k string) string {
			if k == "TRACEHOUSE_THREADS" {
				return threads
			}
			return ""
		}
		for _, where := range [][]string{{"--db", db}, {"--db", ":memory:"}, {"--lake", lk}} {
			io, out, errOut := testIO("")
			args := append(append([]string{}, where...), "sql", "--format", "csv", `SELECT current_setting('threads') - current_setting('external_threads') + 1 AS threads,
				current_setting('threads') >= 3 AS counted`)
			if code := run(args, io, env); code != 0 || out.String() != "threads,counted\n"+threads+",true\n" {
				t.Errorf("TRACEHOUSE_THREADS=%s %v: exit %d, %q %s", threads, where, code, out, errOut)
			}
		}
	}
	for _, bad := range []string{"0", "-2", "two"} {
		io, _, errOut := testIO("")
		env := func(k string) string {
			if k == "TRACEHOUSE_THREADS" {
				return bad
			}
			return ""
		}
		if code := run([]string{"--db", db, "runs"}, io, env); code != 1 || !strings.Contains(errOut.String(), "TRACEHOUSE_THREADS=\""+bad+"\"") {
			t.Errorf("TRACEHOUSE_THREADS=%s: exit %d %q", bad, code, errOut)
		}
	}
}
