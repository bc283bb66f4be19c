package architecture_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// module is this repository's module path.
const module = "github.com/tracehouse/tracehouse"

// TestArchitectureImports: the import graph ARCHITECTURE.md draws is the
// code's, edge for edge (what `go list` shows, read here from the sources'
// import clauses: no file has build constraints), so a new import between
// packages shows up in the document or fails here.
func TestArchitectureImports(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	want := documented(t, string(doc))
	got := map[string]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || strings.HasPrefix(name, "zz_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		deps := map[string]bool{}
		for _, d := range strings.Fields(got[pkg]) {
			deps[d] = true
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, module+"/") {
				deps[strings.TrimPrefix(p, module+"/")] = true
			}
		}
		list := make([]string, 0, len(deps))
		for d := range deps {
			list = append(list, d)
		}
		sort.Strings(list)
		got[pkg] = strings.Join(list, " ")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg, deps := range got {
		w, ok := want[pkg]
		switch {
		case !ok:
			t.Errorf("ARCHITECTURE.md's import graph lacks package %s (-> %s)", pkg, deps)
		case w != deps:
			t.Errorf("ARCHITECTURE.md says %s -> %s; the code imports %s", pkg, w, deps)
		}
	}
	for pkg := range want {
		if _, ok := got[pkg]; !ok {
			t.Errorf("ARCHITECTURE.md's import graph names %s, which is not a package", pkg)
		}
	}
}

// documented parses the import-graph block: the lines after the one
// starting "# go list" up to the closing fence, each "pkg -> dep dep ...".
func documented(t *testing.T, doc string) map[string]string {
	t.Helper()
	_, block, ok := strings.Cut(doc, "\n# go list")
	if !ok {
		t.Fatal("ARCHITECTURE.md has no import graph (a line starting `# go list` in a code block)")
	}
	block, _, _ = strings.Cut(block, "\n```")
	out := map[string]string{}
	for _, line := range strings.Split(block, "\n")[1:] {
		pkg, deps, ok := strings.Cut(line, "->")
		if !ok {
			t.Fatalf("ARCHITECTURE.md import graph: %q is not `pkg -> deps`", line)
		}
		list := strings.Fields(deps)
		sort.Strings(list)
		out[strings.TrimSpace(pkg)] = strings.Join(list, " ")
	}
	return out
}
