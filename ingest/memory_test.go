package ingest

import (
	"context"
	"testing"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestIngestRestoresMemoryLimit: DuckDB's memory limit is bounded while
// files load into a warehouse file, and the caller's limit is back after.
func TestIngestRestoresMemoryLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, "")
	if _, err := w.DB.ExecContext(ctx, `SET memory_limit = '3GiB'`); err != nil {
		t.Fatal(err)
	}
	limit := func() string {
		t.Helper()
		var s string
		if err := w.DB.QueryRowContext(ctx, `SELECT current_setting('memory_limit')`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := limit()
	res, err := Ingest(ctx, w, []string{"../testdata/demo"}, Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() != 0 {
		t.Fatalf("%d files failed", res.Failed())
	}
	if after := limit(); after != before {
		t.Fatalf("memory_limit after ingest %q, want %q", after, before)
	}
}
