package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSchemaCommand lists objects, one object's columns, and fails with one
// line naming an unknown object.
func TestSchemaCommand(t *testing.T) {
	t.Parallel()
	db := demoCopy(t)
	code, out, stderr := runCmd(t, "--db", db, "schema")
	if code != 0 {
		t.Fatalf("schema exit %d: %s", code, stderr)
	}
	for _, want := range []string{"kernel_events", "overlap_kernels", "(run, rank, stage)", "One row per ingested trace file."} {
		if !strings.Contains(out, want) {
			t.Errorf("schema listing lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "_run_id") {
		t.Errorf("internal macro listed:\n%s", out)
	}

	code, out, stderr = runCmd(t, "--db", db, "--format", "json", "schema", "traces")
	if code != 0 {
		t.Fatalf("schema traces exit %d: %s", code, stderr)
	}
	var rows []schemaJSON
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	byName := map[string]schemaJSON{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	if r := byName["content_hash"]; r.Kind != "column" || r.Type == nil || *r.Type != "VARCHAR" || !strings.Contains(r.Description, "idempotency") {
		t.Errorf("traces.content_hash: %+v", r)
	}

	code, _, stderr = runCmd(t, "--db", db, "schema", "no_such_table")
	if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, `"no_such_table"`) {
		t.Errorf("unknown object: exit %d, stderr %q", code, stderr)
	}
}

// TestReadersNeverCreateTheWarehouse: read-only commands on a missing
// warehouse say so in one line, exit 1 and leave no file behind.
func TestReadersNeverCreateTheWarehouse(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "missing.duckdb")
	for _, args := range [][]string{{"runs"}, {"sql", "SELECT 1"}, {"triage", "some-run"}, {"schema"}} {
		code, _, stderr := runCmd(t, append([]string{"--db", db}, args...)...)
		if code != 1 || !strings.Contains(stderr, "no warehouse at "+db) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Fatalf("%v created %s", args, db)
		}
	}
}
