package schema

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracehouse/tracehouse/migrations"
)

// TestSweepTemplateCopies: copies and logs of a process that is gone, or
// older than a day, go; those of a live process (this one) and other files
// stay, as do copies named before pids were in the name, until a day old.
func TestSweepTemplateCopies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := time.Now().Add(-25 * time.Hour)
	dead := deadPID(t)
	me := os.Getpid()
	files := map[string]bool{ // name: removed
		fmt.Sprintf("tracehouse-%d-1.duckdb", dead): true, fmt.Sprintf("tracehouse-%d-1.duckdb.wal", dead): true,
		fmt.Sprintf("tracehouse-%d-2.duckdb", me): false, fmt.Sprintf("tracehouse-%d-2.duckdb.wal", me): false,
		fmt.Sprintf("tracehouse-%d-3.duckdb", me): true, // a day old: a reused pid
		"tracehouse-4.duckdb":                     true, // named before pids were
		"tracehouse-5.duckdb":                     false,
		"other.duckdb":                            false,
		"tracehouse-nsys-cache":                   false,
	}
	for name := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(name, "-3.") || strings.Contains(name, "-4.") || name == "other.duckdb" || name == "tracehouse-nsys-cache" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	sweepTemplateCopies(dir)
	for name, removed := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := os.IsNotExist(err); gone != removed {
			t.Errorf("%s: removed %v, want %v", name, gone, removed)
		}
	}
	if p := copies.CreatePattern(); p != fmt.Sprintf("tracehouse-%d-*.duckdb", me) {
		t.Errorf("copies are named %q", p)
	}
}

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
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

// TestTemplateHoldsTheLibrary: the embedded template holds this binary's
// SQL library, so an in-memory warehouse (a one-shot triage, every --lake
// reader) is a copy and nothing more. A stale one still opens current
// (Open applies the library), which hid it: every such open applied the
// whole library again, 0.4-0.6 CPU-s, three quarters of a small lake's
// opening. After editing sqllib/, refresh it with
//
//	go test ./schema -run TestTemplateCurrent -update-template
func TestTemplateHoldsTheLibrary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, err := writeTemplateCopy(t.TempDir(), "template-*.duckdb")
	if err != nil {
		t.Fatal(err)
	}
	w, err := open(path, true, Options{Threads: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	lib, err := loadLibrary()
	if err != nil {
		t.Fatal(err)
	}
	stored, err := StoredLibraryHash(ctx, w.DB)
	if err != nil {
		t.Fatal(err)
	}
	if stored != lib.hash {
		t.Errorf("the template holds SQL library %q, this binary %q: run go test ./schema -run TestTemplateCurrent -update-template", stored, lib.hash)
	}
}
