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
	db := filepath.Join(t.TempDir(), "w.duckdb")
	if code, _, stderr := runCmd(t, "--db", db, "ingest", "--tag", "gpu=h100", "../../testdata/demo/sglang-llama"); code != 0 {
		t.Fatalf("ingest exit %d: %s", code, stderr)
	}
	q := `SELECT 'a<b>&c' AS z, tags AS m, [3, 1] AS l, {'y': 2} AS s, 7 AS a FROM runs`
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
