package sqllib

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
)

// repoRoot is the repository, seen from this package's directory.
const repoRoot = ".."

// sourceFiles are the repository's .sql files and non-test .go files, by
// path relative to the root.
func sourceFiles(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != repoRoot && (strings.HasPrefix(name, ".") || name == "testdata" || strings.HasPrefix(name, "zz_")) {
				return filepath.SkipDir
			}
			// bench/out and the folders under a bench/NAME are benchmark
			// outputs (ignored by git): a lake left there holds copies
			// of the library's views.
			rel, _ := filepath.Rel(repoRoot, path)
			if parts := strings.Split(filepath.ToSlash(rel), "/"); parts[0] == "bench" && (len(parts) >= 3 || rel == filepath.Join("bench", "out")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".sql") && (!strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLoadListsEveryModule: every .sql file of the library is a module
// with a place in the creation order.
func TestLoadListsEveryModule(t *testing.T) {
	t.Parallel()
	ms, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := fs.Glob(os.DirFS("."), "*.sql")
	if len(ms) != len(files) {
		t.Errorf("%d modules, %d files", len(ms), len(files))
	}
	if Hash(ms) == Hash(ms[:len(ms)-1]) {
		t.Error("the hash ignores a module")
	}
}

// TestEachObjectDefinedOnce: no macro or view is defined in more than one
// file of the repository (a second definition is a copy that can
// diverge), and migrations define none: they hold tables, indexes and data
// changes, and the library every macro and view.
func TestEachObjectDefinedOnce(t *testing.T) {
	t.Parallel()
	where := map[string][]string{}
	for path, text := range sourceFiles(t) {
		seen := map[string]bool{}
		for _, o := range Definitions(text) {
			if strings.HasPrefix(path, "migrations/") {
				t.Errorf("%s defines %s %s: macros and views belong in sqllib/", path, o.Kind, o.Name)
			}
			if !seen[o.Name] {
				where[o.Name] = append(where[o.Name], path)
			}
			if seen[o.Name] {
				t.Errorf("%s defines %s twice", path, o.Name)
			}
			seen[o.Name] = true
		}
	}
	for name, paths := range where {
		if len(paths) > 1 {
			sort.Strings(paths)
			t.Errorf("%s is defined in %d files: %s", name, len(paths), strings.Join(paths, ", "))
		}
	}
	ms, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		// a module of descriptions only (columns) comments on what others define
		if len(Definitions(m.SQL)) == 0 && !commentsOnly(m.SQL) {
			t.Errorf("module %s defines nothing", m.Name)
		}
	}
}

// commentsOnly says whether SQL text is COMMENT ON statements and SQL
// comments only, and holds at least one statement.
func commentsOnly(sql string) bool {
	n := 0
	for _, line := range strings.Split(sql, "\n") {
		switch {
		case strings.TrimSpace(line) == "" || strings.HasPrefix(line, "--"):
		case strings.HasPrefix(line, "COMMENT ON ") && strings.HasSuffix(line, "';"):
			n++
		default:
			return false
		}
	}
	return n > 0
}

// codeOnly blanks out SQL comments and string literals.
var commentOrString = regexp.MustCompile(`(?s)--[^\n]*|'(?:[^']|'')*'`)

// TestMigrationsCallNoLibraryObject: a migration's data change never
// calls a macro or view of the library, which is created after the
// migrations (its views need their tables) and changes without a version:
// such a change writes its SQL out.
func TestMigrationsCallNoLibraryObject(t *testing.T) {
	t.Parallel()
	ms, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	// a macro is called, a view read FROM or JOINed (traces has a column
	// named like the view kernel_events)
	var macros, views []string
	for _, m := range ms {
		for _, o := range Definitions(m.SQL) {
			if o.Kind == "view" {
				views = append(views, regexp.QuoteMeta(o.Name))
			} else {
				macros = append(macros, regexp.QuoteMeta(o.Name))
			}
		}
	}
	uses := regexp.MustCompile(`(?i)\b(` + strings.Join(macros, "|") + `)\s*\(|\b(?:FROM|JOIN)\s+(` + strings.Join(views, "|") + `)\b`)
	for path, text := range sourceFiles(t) {
		if !strings.HasPrefix(path, "migrations/") || !strings.HasSuffix(path, ".sql") {
			continue
		}
		if m := uses.FindString(commentOrString.ReplaceAllString(text, "")); m != "" {
			t.Errorf("%s uses %s, an object of the SQL library", path, m)
		}
	}
}

// TestPublicObjectsDocumented: every public (not `_`-prefixed) macro and
// view has a comment block right above its definition, which names it,
// and a COMMENT ON statement (what `tracehouse schema` shows).
func TestPublicObjectsDocumented(t *testing.T) {
	t.Parallel()
	ms, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		lines := strings.Split(m.SQL, "\n")
		for i, line := range lines {
			defs := Definitions(line)
			if len(defs) == 0 || strings.HasPrefix(defs[0].Name, "_") {
				continue
			}
			o := defs[0]
			var above []string
			for j := i - 1; j >= 0 && strings.HasPrefix(lines[j], "--"); j-- {
				above = append(above, lines[j])
			}
			if !strings.Contains(strings.Join(above, "\n"), o.Name) {
				t.Errorf("sqllib/%s.sql:%d: %s %s has no comment above it naming it", m.Name, i+1, o.Kind, o.Name)
			}
			kind := "VIEW"
			if o.Kind == "macro" {
				kind = "MACRO( TABLE)?"
			}
			if !regexp.MustCompile(`(?m)^COMMENT ON ` + kind + ` ` + o.Name + ` IS '`).MatchString(m.SQL) {
				t.Errorf("sqllib/%s.sql: %s %s has no COMMENT ON statement", m.Name, o.Kind, o.Name)
			}
		}
	}
}

// TestEmbeddedHash: the hash read from the files as they are hashed is
// Hash of the loaded modules, for the embedded library and for another
// set of files; a file missing from Modules is an error, as for Load.
func TestEmbeddedHash(t *testing.T) {
	t.Parallel()
	ms, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	got, err := EmbeddedHash()
	if err != nil || got != Hash(ms) {
		t.Errorf("EmbeddedHash() = %s, %v; want Hash(Load()) = %s", got, err, Hash(ms))
	}
	other := fstest.MapFS{}
	var want []Module
	for i, m := range Modules {
		text := strings.Repeat("SELECT "+m+";\n", 3000*i) // some past hashFile's 32 kB buffer
		other[m+".sql"] = &fstest.MapFile{Data: []byte(text)}
		want = append(want, Module{Name: m, SQL: text})
	}
	if got, err := hashFS(other); err != nil || got != Hash(want) {
		t.Errorf("hashFS(other files) = %s, %v; want %s", got, err, Hash(want))
	}
	other["stray.sql"] = &fstest.MapFile{Data: []byte("SELECT 1;")}
	if _, err := hashFS(other); err == nil || !strings.Contains(err.Error(), "stray.sql is not in sqllib.Modules") {
		t.Errorf("hashFS with a file not in Modules: err = %v", err)
	}
}
