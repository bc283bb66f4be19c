// Package sqlcheck checks a package's embedded SQL statements from its
// tests: that each prepares against a migrated warehouse, that every name
// the code asks for is embedded, and that every embedded file is named
// somewhere. Statements are reached by name (stmt("x"), or names a store
// builds at run time) and no compiler checks them. Imported only by
// _test.go files (ingest's and aggregates'), so it is not in the binary.
package sqlcheck

import (
	"context"
	"database/sql"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Statements is one package's embedded statements: files sql/NAME.sql of
// FS, whose text Text(NAME) gives (the package's stmt), named in its code
// by the calls of NameArgs (a function's name -> the index of its argument
// that is a statement name).
type Statements struct {
	FS       fs.FS
	Text     func(name string) string
	NameArgs map[string]int
}

// Names lists the embedded statements by name (file name without .sql).
func (s Statements) Names(t testing.TB) []string {
	t.Helper()
	paths, err := fs.Glob(s.FS, "sql/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no embedded statements")
	}
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".sql"))
	}
	return names
}

// Prepare prepares every embedded statement on conn (a connection of a
// migrated warehouse holding whatever tables the statements expect to
// find there), so a renamed column or table fails a test rather than a
// user's run.
func (s Statements) Prepare(t testing.TB, ctx context.Context, conn *sql.Conn) {
	t.Helper()
	for _, name := range s.Names(t) {
		st, err := conn.PrepareContext(ctx, s.Text(name))
		if err != nil {
			t.Errorf("prepare sql/%s.sql: %v", name, err)
			continue
		}
		st.Close()
	}
}

// CheckNames checks that every statement name the package's code (the
// non-test Go files of the test's working directory) can ask for is
// embedded, and that every embedded file is named. Asked for are the
// string literals passed as a name (NameArgs), the elements of a
// []string literal whose loop passes its element as one, and built: the
// names the code makes at run time, each with where it is made.
func (s Statements) CheckNames(t testing.TB, built map[string]string) {
	t.Helper()
	have := map[string]bool{}
	for _, n := range s.Names(t) {
		have[n] = true
	}
	files := goFiles(t)
	wanted := map[string]string{} // name -> where it is asked for
	for _, n := range s.literalNames(files) {
		wanted[n] = "a call naming it"
	}
	for n, where := range built {
		wanted[n] = where
	}
	var missing []string
	for n, where := range wanted {
		if !have[n] {
			missing = append(missing, n+" (asked for by "+where+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("no sql/%s", m)
	}
	strs := stringLiterals(files)
	var unused []string
	for n := range have {
		if _, ok := wanted[n]; !ok && !strs[n] {
			unused = append(unused, n)
		}
	}
	sort.Strings(unused)
	for _, n := range unused {
		t.Errorf("sql/%s.sql is embedded but no code names it", n)
	}
}

// goFiles parses the non-test Go files of the working directory (go test
// runs a package's tests in its directory).
func goFiles(t testing.TB) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// literalNames returns the string literals passed as a statement name
// (NameArgs), and those of a []string literal whose loop passes its
// element as one.
func (s Statements) literalNames(files []*ast.File) []string {
	var names []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if r, ok := n.(*ast.RangeStmt); ok {
				names = append(names, s.rangedNames(r)...)
			}
			if arg := s.nameArg(n); arg != nil {
				if str, ok := stringLit(arg); ok {
					names = append(names, str)
				}
			}
			return true
		})
	}
	return names
}

// nameArg is the statement-name argument of n when n calls a function of
// NameArgs, else nil.
func (s Statements) nameArg(n ast.Node) ast.Expr {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return nil
	}
	id, ok := call.Fun.(*ast.Ident)
	if !ok {
		return nil
	}
	i, ok := s.NameArgs[id.Name]
	if !ok || i >= len(call.Args) {
		return nil
	}
	return call.Args[i]
}

// rangedNames returns the elements of `for _, v := range []string{...}`
// when the loop's body passes v as a statement name.
func (s Statements) rangedNames(r *ast.RangeStmt) []string {
	lit, ok := r.X.(*ast.CompositeLit)
	v, vok := r.Value.(*ast.Ident)
	if !ok || !vok {
		return nil
	}
	passed := false
	ast.Inspect(r.Body, func(n ast.Node) bool {
		if a, ok := s.nameArg(n).(*ast.Ident); ok && a.Name == v.Name {
			passed = true
		}
		return !passed
	})
	if !passed {
		return nil
	}
	var names []string
	for _, e := range lit.Elts {
		if str, ok := stringLit(e); ok {
			names = append(names, str)
		}
	}
	return names
}

// stringLiterals is every whole string literal of files (a name handed
// to a helper that calls stmt, such as exec("launch_sites", ...)).
func stringLiterals(files []*ast.File) map[string]bool {
	out := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if e, ok := n.(ast.Expr); ok {
				if str, ok := stringLit(e); ok {
					out[str] = true
				}
			}
			return true
		})
	}
	return out
}

// stringLit is the value of a string literal.
func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
