package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// ownedCounts counts, per table with a run_id or trace_id column, the rows
// belonging to run label (through its traces for trace-keyed tables).
func ownedCounts(t *testing.T, w *schema.Warehouse, label string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	rows, err := w.DB.QueryContext(ctx, `SELECT table_name, bool_or(column_name = 'run_id')
		FROM duckdb_columns() WHERE schema_name = 'main' AND column_name IN ('run_id', 'trace_id')
		  AND table_name IN (SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main')
		GROUP BY 1 ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	type tbl struct {
		name   string
		hasRun bool
	}
	var tables []tbl
	for rows.Next() {
		var x tbl
		if err := rows.Scan(&x.name, &x.hasRun); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, x)
	}
	rows.Close()
	// every table's count in one statement (a statement a table was most
	// of TestRemoveRuns' reads)
	var counts []string
	for _, x := range tables {
		q := fmt.Sprintf(`SELECT '%s', count(*) FROM %s WHERE trace_id IN (SELECT trace_id FROM traces t JOIN runs r USING (run_id) WHERE r.label = $label)`, x.name, x.name)
		if x.hasRun {
			q = fmt.Sprintf(`SELECT '%s', count(*) FROM %s WHERE run_id IN (SELECT run_id FROM runs WHERE label = $label)`, x.name, x.name)
		}
		counts = append(counts, q)
	}
	rows, err = w.DB.QueryContext(ctx, strings.Join(counts, "\nUNION ALL "), sql.Named("label", label))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		out[name] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(tables) {
		t.Fatalf("counts of %d tables, want %d", len(out), len(tables))
	}
	return out
}

func TestRemoveRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	paths := []string{"../testdata/demo/sglang-llama", "../testdata/demo/vllm-qwen-moe", "../testdata/demo/trtllm-llama"}
	if _, err := Ingest(ctx, w, paths, Options{Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	if err := Finish(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatal(err)
	}
	before := ownedCounts(t, w, "sglang-llama")
	keep := ownedCounts(t, w, "vllm-qwen-moe")
	for _, table := range []string{"kernels", "launches", "cpu_ops", "py_frame_events", "annotations", "kernel_overlap_store", "kernel_overlap_runs", "traces", "runs"} {
		if before[table] == 0 || keep[table] == 0 {
			t.Fatalf("fixture: %s has no rows for both runs (%d, %d)", table, before[table], keep[table])
		}
	}

	// An unknown label among known ones removes nothing.
	_, err = RemoveRuns(ctx, w.DB, []string{"sglang-llama", "nope"})
	var nf *RunNotFoundError
	if !errors.As(err, &nf) || nf.Label != "nope" {
		t.Fatalf("want RunNotFoundError for nope, got %v", err)
	}
	if got := ownedCounts(t, w, "sglang-llama"); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("a failed removal changed rows: %v -> %v", before, got)
	}

	removed, err := RemoveRuns(ctx, w.DB, []string{"sglang-llama", "trtllm-llama"})
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 || removed[0].Label != "sglang-llama" || removed[0].Traces != before["traces"] {
		t.Errorf("removed %+v, want sglang-llama with %d traces first", removed, before["traces"])
	}
	var runs, orphans int64
	if err := w.DB.QueryRow(`SELECT count(*) FROM runs`).Scan(&runs); err != nil || runs != 1 {
		t.Fatalf("%d runs left (%v), want 1", runs, err)
	}
	if err := w.DB.QueryRow(`SELECT (SELECT count(*) FROM kernels WHERE trace_id NOT IN (SELECT trace_id FROM traces))
		+ (SELECT count(*) FROM launches WHERE trace_id NOT IN (SELECT trace_id FROM traces))
		+ (SELECT count(*) FROM kernel_overlap_store WHERE run_id NOT IN (SELECT run_id FROM runs))`).Scan(&orphans); err != nil || orphans != 0 {
		t.Errorf("%d rows outlived their run (%v)", orphans, err)
	}
	if got := ownedCounts(t, w, "vllm-qwen-moe"); fmt.Sprint(got) != fmt.Sprint(keep) {
		t.Errorf("the kept run changed: %v -> %v", keep, got)
	}
	// Re-ingesting a removed run's files stores them again.
	res, err := Ingest(ctx, w, paths[:1], Options{Jobs: 2})
	if err != nil || res.Failed() != 0 {
		t.Fatalf("re-ingest: %v", err)
	}
	if got := ownedCounts(t, w, "sglang-llama"); got["kernels"] != before["kernels"] || got["traces"] != before["traces"] {
		t.Errorf("re-ingest after removal: %v, want the counts of %v", got, before)
	}
}

func TestRenameRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// the demo's runs, sglang-llama and trtllm-llama among them, as
	// demoTemplate ingested them once (not ingested again here)
	w := schematest.Open(t, demoTemplate(t))
	if err := RenameRun(ctx, w.DB, "sglang-llama", "trtllm-llama"); err == nil {
		t.Error("renaming onto an existing label succeeded")
	}
	var nf *RunNotFoundError
	if err := RenameRun(ctx, w.DB, "nope", "x"); !errors.As(err, &nf) {
		t.Errorf("unknown run: %v", err)
	}
	if err := RenameRun(ctx, w.DB, "sglang-llama", "baseline"); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := w.DB.QueryRow(`SELECT count(*) FROM traces JOIN runs USING (run_id) WHERE label = 'baseline'`).Scan(&n); err != nil || n == 0 {
		t.Errorf("baseline has %d traces (%v)", n, err)
	}
}
