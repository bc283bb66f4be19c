package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/schema"
)

// TestWarehouseFailureStopsIngest: a failure of the warehouse itself (here
// a column the loader reads is gone) stops the ingest at the first file,
// instead of trying every other file against a broken warehouse.
func TestWarehouseFailureStopsIngest(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for i := range 3 {
		trace := fmt.Sprintf(`{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k%d", "ts": 1, "dur": 2, "pid": 0, "tid": 7}]}`, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("t%d.trace.json", i)), []byte(trace), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.DB.ExecContext(ctx, `ALTER TABLE traces RENAME COLUMN content_hash TO hash_gone`); err != nil {
		t.Fatal(err)
	}
	res, err := Ingest(ctx, w, []string{dir}, Options{Jobs: 1})
	if err == nil || !strings.Contains(err.Error(), "content_hash") {
		t.Fatalf("err = %v, want the warehouse failure", err)
	}
	if len(res.Files) != 3 {
		t.Fatalf("%d results, want 3", len(res.Files))
	}
	for i, f := range res.Files {
		if f.Status != StatusFailed || f.Err == nil {
			t.Fatalf("file %d: status %s, err %v", i, f.Status, f.Err)
		}
		tried := !strings.Contains(f.Err.Error(), "not loaded")
		if tried != (i == 0) {
			t.Errorf("file %d: %v (only the first should have been tried)", i, f.Err)
		}
	}
}
