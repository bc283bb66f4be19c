package architecture_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// specPage matches a reference to one of the team's specification pages,
// with the path written before it: those pages live outside this
// repository, so a reader of the code, a help text or the README cannot
// follow one.
var specPage = regexp.MustCompile(`[\w./-]*\b(?:warehouse|triage|compare|catalog|capture|performance|style|catalog-facts)\.md\b|[\w./-]*shared/spec\b[\w./-]*`)

// TestNoReferencesOutsideTheRepository (issue 36 item 17): no source,
// query, help text, README line or golden output names a file outside the
// repository; a comment states its rule, or points to a README section.
// A name that resolves to a file in the repository (as written, from the
// file's directory or the root, or by base name below the file's
// directory, as filepath.Join("testdata", "x.md") writes it) is fine.
// Landed migrations are left out: they never change (the descriptions they
// set that `schema` prints are replaced in sqllib/columns.sql, and the
// schema goldens are read here).
func TestNoReferencesOutsideTheRepository(t *testing.T) {
	t.Parallel()
	text := map[string]bool{".go": true, ".sql": true, ".md": true, ".yaml": true, ".yml": true,
		".txt": true, ".txtar": true, ".markdown": true, ".golden": true, ".html": true, ".csv": true}
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch path {
			case ".git", "migrations", filepath.Join("bench", "out"), "build":
				return filepath.SkipDir
			}
			return nil
		}
		// the copy of the catalog facts is the team's text, kept as is;
		// this file names the pages it looks for
		if !d.Type().IsRegular() || !text[filepath.Ext(path)] || path == "references_test.go" ||
			path == filepath.Join("catalog", "testdata", "catalog-facts.md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range specPage.FindAllString(line, -1) {
				if !inRepository(filepath.Dir(path), m) {
					t.Errorf("%s:%d names %q, which is not in the repository: %s", path, i+1, m, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 200 {
		t.Errorf("only %d files read", files)
	}
}

// inRepository says whether name, written in a file of dir, is a file of
// the repository.
func inRepository(dir, name string) bool {
	name = strings.TrimRight(name, ".")
	for _, p := range []string{filepath.Join(dir, name), name} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && !strings.HasPrefix(filepath.Clean(p), "..") {
			return true
		}
	}
	if dir == "." {
		return false
	}
	found := false
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == filepath.Base(name) {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	return found
}
