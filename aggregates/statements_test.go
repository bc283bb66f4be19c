package aggregates

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// sqlNames lists the embedded statements by name (file name without .sql).
func sqlNames(t *testing.T) []string {
	t.Helper()
	paths, err := fs.Glob(sqlFiles, "sql/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".sql"))
	}
	return names
}

// TestEveryStatementPrepares prepares every embedded statement against a
// migrated warehouse, so a renamed column or table fails here rather than
// halfway through someone's finish.
func TestEveryStatementPrepares(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, "")
	conn, err := w.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The overlap sweep's rows reach overlap_store_rows.sql as a virtual
	// table (a query appender): stand in an empty table of its columns.
	defs := make([]string, len(sweptColumns))
	for i, c := range sweptColumns {
		defs[i] = c + " BIGINT"
	}
	if _, err := conn.ExecContext(ctx, "CREATE TEMP TABLE _swept ("+strings.Join(defs, ", ")+")"); err != nil {
		t.Fatal(err)
	}
	names := sqlNames(t)
	if len(names) == 0 {
		t.Fatal("no embedded statements")
	}
	for _, name := range names {
		st, err := conn.PrepareContext(ctx, stmt(name))
		if err != nil {
			t.Errorf("prepare sql/%s.sql: %v", name, err)
			continue
		}
		st.Close()
	}
}

// TestEveryStatementNameExists checks that every statement name the code
// can ask stmt for is embedded: the literal stmt("x") calls, and the names
// the stores build at run time (a store's record statement with "_runs"
// for a batch of runs, its batchable check likewise), which no compiler
// checks. It also finds embedded files nothing names.
func TestEveryStatementNameExists(t *testing.T) {
	t.Parallel()
	have := map[string]bool{}
	for _, n := range sqlNames(t) {
		have[n] = true
	}
	wanted := map[string]string{} // name -> where it is asked for
	for _, n := range literalStmtNames(t) {
		wanted[n] = "a call naming it"
	}
	for _, s := range []runStore{overlapStore(), stepStore()} {
		for _, n := range append(append([]string{}, s.stmts...), s.after...) {
			wanted[n] = "runStore " + s.what
		}
		wanted[s.commit] = "runStore " + s.what
		wanted[s.commit+"_runs"] = "runStore " + s.what + " (a batch)"
		if s.batchable != "" {
			wanted[s.batchable] = "runStore " + s.what
			wanted[s.batchable+"_runs"] = "runStore " + s.what + " (a batch)"
		}
	}
	for _, s := range []rankStore{fusionStore(), overlapRowsStore(0)} {
		for _, n := range []string{s.forget, s.clear, s.rows, s.commit, s.commit + "_runs"} {
			wanted[n] = "rankStore " + s.what
		}
		if s.batchable != "" {
			wanted[s.batchable] = "rankStore " + s.what
			wanted[s.batchable+"_runs"] = "rankStore " + s.what + " (a batch)"
		}
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
	var unused []string
	for n := range have {
		if _, ok := wanted[n]; !ok && !referencedAsString(t, n) {
			unused = append(unused, n)
		}
	}
	sort.Strings(unused)
	for _, n := range unused {
		t.Errorf("sql/%s.sql is embedded but no code names it", n)
	}
}

// goFiles parses the package's non-test Go files.
func goFiles(t *testing.T) []*ast.File {
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

// nameArgs are the functions that take a statement name, and where.
var nameArgs = map[string]int{"stmt": 0, "pendingRuns": 2, "someRuns": 2}

// literalStmtNames returns the string literals passed as a statement name
// to stmt or to a function that hands its name to stmt (nameArgs), and
// those of a []string literal whose loop passes its element to one.
func literalStmtNames(t *testing.T) []string {
	var names []string
	for _, f := range goFiles(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			if r, ok := n.(*ast.RangeStmt); ok {
				names = append(names, rangedNames(r)...)
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
			if !ok {
				return true
			}
			i, ok := nameArgs[id.Name]
			if !ok || i >= len(call.Args) {
				return true
			}
			if lit, ok := call.Args[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					names = append(names, s)
				}
			}
			return true
		})
	}
	return names
}

// referencedAsString says whether name appears as a whole string literal
// anywhere in the package's code (a name handed to a helper that calls
// stmt).
func referencedAsString(t *testing.T, name string) bool {
	found := false
	for _, f := range goFiles(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && s == name {
					found = true
				}
			}
			return !found
		})
	}
	return found
}

// rangedNames returns the elements of `for _, v := range []string{...}`
// when the loop's body passes v as a statement name (nameArgs).
func rangedNames(r *ast.RangeStmt) []string {
	lit, ok := r.X.(*ast.CompositeLit)
	v, vok := r.Value.(*ast.Ident)
	if !ok || !vok {
		return nil
	}
	passed := false
	ast.Inspect(r.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if id, ok := call.Fun.(*ast.Ident); ok {
			if i, ok := nameArgs[id.Name]; ok && i < len(call.Args) {
				if a, ok := call.Args[i].(*ast.Ident); ok && a.Name == v.Name {
					passed = true
				}
			}
		}
		return !passed
	})
	if !passed {
		return nil
	}
	var names []string
	for _, e := range lit.Elts {
		if b, ok := e.(*ast.BasicLit); ok && b.Kind == token.STRING {
			if s, err := strconv.Unquote(b.Value); err == nil {
				names = append(names, s)
			}
		}
	}
	return names
}
