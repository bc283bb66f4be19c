package schema

import (
	"bytes"
	"compress/gzip"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tracehouse/tracehouse/tempfiles"
)

// TemplateFile is where the migrated empty warehouse lives in this package
// (gzip of a DuckDB file); TestTemplateCurrent rewrites it with -update-template.
const TemplateFile = "template/warehouse.duckdb.gz"

// template is an empty warehouse file with every embedded migration
// applied and the embedded catalog installed (ingest.InstallCatalog),
// written by this package's DuckDB library (73 KB gzipped). With the
// catalog in it, a new warehouse skips installing it, which was 9-12 ms
// of a one-shot `triage FILE` (the appends and a commit); a warehouse
// given another catalog (--catalog) replaces it as before.
//
//go:embed template/warehouse.duckdb.gz
var template []byte

// openTemplate opens a throw-away warehouse (what Memory asks for) as a
// temporary copy of the template, removed when the warehouse closes,
// instead of running the migrations in memory: the 11 migrations cost
// about 230-270 ms of CPU (mostly binding macros and the classifier's
// rules), a copy a few ms, which is most of what separated a one-shot
// `triage --db :memory: FILE` of a small trace from its target. (DuckDB's
// COPY FROM DATABASE into memory was measured too, about 60 ms, but it
// re-creates macros from their text and drops their CTEs' MATERIALIZED.)
// Migrations newer than the template, if any, are applied as usual.
func openTemplate(ctx context.Context, ms []Migration, opt Options, init connInit) (*Warehouse, error) {
	// A killed process cannot remove its copy: sweep what such processes
	// left (best effort; a copy still in use is rarely this old, and
	// removing an open file's name does not disturb its owner).
	sweepTemplateCopies(os.TempDir())
	path, err := writeTemplateCopy("", copies.CreatePattern())
	if err != nil {
		return nil, err
	}
	cleanup := func() error { return errors.Join(removeIfExists(path), removeIfExists(path+".wal")) }
	w, err := open(path, false, opt, init)
	if err != nil {
		return nil, errors.Join(err, cleanup())
	}
	w.Path, w.cleanup = Memory, cleanup
	// Nothing of it outlives the process: no checkpoint when it closes
	// (which would write every table to the file only to delete it).
	if _, err := w.DB.ExecContext(ctx, "PRAGMA disable_checkpoint_on_shutdown"); err != nil {
		return nil, errors.Join(fmt.Errorf("warehouse template: %w", err), w.Close())
	}
	if err := migrate(ctx, w.DB, ms, true); err != nil {
		return nil, errors.Join(err, w.Close())
	}
	return w, nil
}

// copies and logs name the template copies and their write-ahead logs in
// the temporary directory: tracehouse-<pid>-<random>.duckdb.
// DuckDB's own spill directory of a copy is named after it too.
var (
	copies = tempfiles.Pattern{Prefix: "tracehouse-", Suffix: ".duckdb"}
	logs   = tempfiles.Pattern{Prefix: "tracehouse-", Suffix: ".duckdb.wal"}
	spills = tempfiles.Pattern{Prefix: "tracehouse-", Suffix: ".duckdb.tmp"}
)

// sweepTemplateCopies removes the copies, logs and spill directories in
// dir of processes that are gone, or not changed for a day
// (tempfiles.Sweep): it only tidies up.
func sweepTemplateCopies(dir string) {
	for _, p := range []tempfiles.Pattern{copies, logs, spills} {
		tempfiles.Sweep(dir, p)
	}
}

// writeTemplateCopy writes the template to a new file in dir (os.CreateTemp's
// dir and pattern: "" is the temporary directory).
func writeTemplateCopy(dir, pattern string) (string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(template))
	if err != nil {
		return "", fmt.Errorf("warehouse template: %w", err)
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", fmt.Errorf("warehouse template: %w", err)
	}
	if _, err := io.Copy(f, zr); err != nil {
		f.Close()
		return "", errors.Join(fmt.Errorf("warehouse template: write %s: %w", f.Name(), err), os.Remove(f.Name()))
	}
	if err := f.Close(); err != nil {
		return "", errors.Join(fmt.Errorf("warehouse template: write %s: %w", f.Name(), err), os.Remove(f.Name()))
	}
	return f.Name(), nil
}

// createFromTemplate makes a warehouse file that does not exist yet a copy
// of the template, as openTemplate does for an in-memory one: a new
// warehouse then opens current instead of running every migration (about
// 250 ms of CPU, paid by the first ingest of every new warehouse). The copy
// is written beside path and linked into place, so a process opening path
// meanwhile sees no file or a whole one, and one that created path first
// keeps its file. It does nothing when path (or a log of it) exists or
// cannot be made here: opening it then creates and migrates it, or says
// why it cannot.
func createFromTemplate(path string) {
	for _, p := range []string{path, path + ".wal"} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return
		}
	}
	tmp, err := writeTemplateCopy(filepath.Dir(path), "."+filepath.Base(path)+".template-*")
	if err != nil {
		return
	}
	defer os.Remove(tmp)
	_ = os.Link(tmp, path) // exists: another process made it first
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
