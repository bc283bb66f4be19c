package schema

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracehouse/tracehouse/migrations"
)

// TestSweepTemplateCopies: copies and logs older than the cutoff go, newer
// ones and other files stay.
func TestSweepTemplateCopies(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-3 * 24 * time.Hour)
	files := map[string]bool{ // name: removed
		"tracehouse-1.duckdb": true, "tracehouse-1.duckdb.wal": true,
		"tracehouse-2.duckdb": false, "tracehouse-2.duckdb.wal": false,
		"other.duckdb": false,
	}
	for name, stale := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if stale || name == "other.duckdb" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	sweepTemplateCopies(dir, time.Now().Add(-staleCopyAge))
	for name, removed := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := os.IsNotExist(err); gone != removed {
			t.Errorf("%s: removed %v, want %v", name, gone, removed)
		}
	}
}

// TestNewFileFromTemplate: a new warehouse file is a copy of the template
// (its migrations were recorded when the template was made, not now), is
// current, and leaves no temporary file beside it; an existing file is
// opened as it is.
func TestNewFileFromTemplate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "new.duckdb")
	w, err := Open(ctx, path, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := LoadMigrations(migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := Pending(ctx, w.DB, ms); err != nil || len(p) != 0 {
		t.Errorf("pending after creating from the template: %v %v", p, err)
	}
	applied := func(w *Warehouse) (at time.Time) {
		t.Helper()
		if err := w.DB.QueryRow(`SELECT max(applied_at) FROM schema_migrations`).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	copied, err := Open(ctx, Memory, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Close()
	if got, want := applied(w), applied(copied); !got.Equal(want) {
		t.Errorf("migrations recorded at %v, the template's at %v: the file was migrated, not copied", got, want)
	}
	if _, err := w.DB.Exec(`CREATE TABLE kept AS SELECT 'kept' AS label`); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "new.duckdb" {
			t.Errorf("left beside it: %s", e.Name())
		}
	}
	w, err = Open(ctx, path, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var label string
	if err := w.DB.QueryRow(`SELECT label FROM kept`).Scan(&label); err != nil || label != "kept" {
		t.Errorf("reopened: label %q %v", label, err)
	}
}
