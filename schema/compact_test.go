package schema_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestCompactAfterRm (issue 36 item 16): removing runs leaves the file as
// large as before (DuckDB keeps deleted rows' blocks); Compact rewrites it
// smaller, with every row, object and comment of the warehouse as it was
// after the removal, and the warehouse takes new runs after.
func TestCompactAfterRm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := schematest.Copy(t, threeRuns(t))
	open := func() *schema.Warehouse {
		t.Helper()
		w, err := schema.Open(ctx, path, schema.Options{Threads: 1, MustExist: true})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	// Every table's rows (a hash of each row, summed), every object and
	// every comment, as a text.
	state := func(w *schema.Warehouse) string {
		t.Helper()
		rows, err := w.DB.Query(`SELECT table_name FROM duckdb_tables() WHERE NOT temporary ORDER BY ALL`)
		if err != nil {
			t.Fatal(err)
		}
		var tables []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			tables = append(tables, s)
		}
		rows.Close()
		var b strings.Builder
		for _, tb := range tables {
			b.WriteString(schematest.Dump(t, w.DB, `SELECT '`+tb+`', count(*), sum(hash(t)) FROM "`+tb+`" t`))
		}
		b.WriteString(schematest.Dump(t, w.DB, `SELECT table_name, comment FROM duckdb_tables() WHERE NOT temporary ORDER BY ALL`))
		b.WriteString(schematest.Dump(t, w.DB, `SELECT table_name, column_name, data_type, comment FROM duckdb_columns() WHERE NOT internal ORDER BY ALL`))
		b.WriteString(schematest.Dump(t, w.DB, `SELECT view_name, sql, comment FROM duckdb_views() WHERE NOT internal ORDER BY ALL`))
		b.WriteString(schematest.Dump(t, w.DB, `SELECT function_name, macro_definition, comment FROM duckdb_functions() WHERE NOT internal AND function_type IN ('macro', 'table_macro') ORDER BY ALL`))
		b.WriteString(schematest.Dump(t, w.DB, `SELECT sequence_name, last_value FROM duckdb_sequences() ORDER BY ALL`))
		b.WriteString(schematest.Dump(t, w.DB, `SELECT constraint_type, table_name, constraint_column_names FROM duckdb_constraints() ORDER BY ALL`))
		return b.String()
	}
	size := func() int64 {
		t.Helper()
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}

	full := size()
	w := open()
	if _, err := ingest.RemoveRuns(ctx, w.DB, []string{"tokenspeed-deepseek", "vllm-qwen-moe"}); err != nil {
		t.Fatal(err)
	}
	want := state(w)
	if !strings.Contains(want, "trtllm") {
		t.Fatalf("the run left is not in the state:\n%s", want)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	removed := size()
	if removed < full {
		t.Fatalf("the file shrank by itself after rm (%d -> %d bytes): nothing left to test", full, removed)
	}

	c, err := schema.Compact(ctx, open())
	if err != nil {
		t.Fatal(err)
	}
	// The reference: the same three runs in a warehouse that keeps them,
	// compacted the same way. Compacting after rm must come out smaller than
	// that (the removed runs' rows are gone from the file, not only their
	// blocks freed) and smaller than the file it started from. Interned
	// names stay by design (RemoveRuns), so a warehouse that never held the
	// removed runs is no reference; nor is a fixed fraction, which moves with
	// the catalog's size (every column's description is stored in it).
	kept := compacted(t)
	if c.Before != removed || c.After != size() || c.After >= removed || c.After >= kept {
		t.Fatalf("compact: %+v, file %d bytes (%d before the removal, %d after; %d compacted with the runs kept): want it smaller than both", c, size(), full, removed, kept)
	}
	if leftover, _ := filepath.Glob(path + ".compact-*"); len(leftover) > 0 {
		t.Fatalf("the copy was left beside the file: %v", leftover)
	}
	w = open()
	defer w.Close()
	if got := state(w); got != want {
		t.Fatalf("the compacted warehouse differs:\n%s\nwant:\n%s", got, want)
	}
	if _, err := ingest.Ingest(ctx, w, []string{"../testdata/demo/tokenspeed-deepseek"}, ingest.Options{Run: "again", Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	var runs, maxID int64
	if err := w.DB.QueryRow(`SELECT count(*), max(run_id) FROM runs`).Scan(&runs, &maxID); err != nil {
		t.Fatal(err)
	}
	if runs != 2 || maxID <= 3 {
		t.Fatalf("after compacting, a new run: %d runs, newest id %d (want 2 runs, a new id above the removed ones)", runs, maxID)
	}
}

// TestCompactRefuses: an in-memory warehouse, or one opened read-only, is
// an error that leaves nothing behind (and the file as it was); the
// warehouse is closed all the same.
func TestCompactRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mem, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Compact(ctx, mem); err == nil {
		t.Fatal("compact of an in-memory warehouse: no error")
	}
	if err := mem.DB.Ping(); err == nil {
		t.Error("the in-memory warehouse is still open after Compact")
	}
	path := schematest.Copy(t, schematest.Migrated(t))
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := schema.Open(ctx, path, schema.Options{Threads: 1, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Compact(ctx, ro); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("compact of a read-only warehouse: %v", err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Error("the refused compaction changed the file")
	}
	if left, _ := filepath.Glob(path + ".*"); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// threeRuns is a warehouse holding three demo runs, ingested (one ingest
// each, closed) once per test binary: TestCompactAfterRm removes two from
// a copy, and compacts another copy, which keeps them, as its reference.
func threeRuns(t *testing.T) string {
	t.Helper()
	return schematest.Template(t, "three-runs", func(ctx context.Context, w *schema.Warehouse) error {
		for _, run := range []string{"tokenspeed-deepseek", "trtllm-llama", "vllm-qwen-moe"} {
			if _, err := ingest.Ingest(ctx, w, []string{filepath.Join("..", "testdata", "demo", run)}, ingest.Options{Run: run, Jobs: 1}); err != nil {
				return err
			}
		}
		return nil
	})
}

// compacted is the size of a copy of threeRuns after Compact.
func compacted(t *testing.T) int64 {
	t.Helper()
	ctx := context.Background()
	path := schematest.Copy(t, threeRuns(t))
	w, err := schema.Open(ctx, path, schema.Options{Threads: 1, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := schema.Compact(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	return c.After
}
