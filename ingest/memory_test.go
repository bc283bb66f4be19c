package ingest

import (
	"context"
	"errors"
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

// TestDuckBoundLift: the bound scales with the jobs, lifting it puts the
// caller's limit back, and only DuckDB's out-of-memory errors count as such.
func TestDuckBoundLift(t *testing.T) {
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
	b, err := boundDuckDB(ctx, w, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := limit(); got != "320.0 MiB" {
		t.Fatalf("bound for 2 jobs: memory_limit %q, want 320.0 MiB", got)
	}
	if !b.lift(ctx) || !b.lift(ctx) {
		t.Fatal("lift: false with a bound in force")
	}
	if got := limit(); got != before {
		t.Fatalf("after lift: memory_limit %q, want %q", got, before)
	}
	if err := b.restore(ctx); err != nil {
		t.Fatal(err)
	}
	var none *duckBound
	if none.lift(ctx) || none.restore(ctx) != nil {
		t.Fatal("no bound: lift or restore did something")
	}
	if isOutOfMemory(errors.New("Out of Memory Error: not from DuckDB")) {
		t.Fatal("a plain error counted as DuckDB running out of memory")
	}
}
