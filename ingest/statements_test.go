package ingest

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

	"github.com/duckdb/duckdb-go/v2"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// sqlType names the column types the virtual tables use.
var sqlType = map[duckdb.Type]string{duckdb.TYPE_BIGINT: "BIGINT", duckdb.TYPE_BOOLEAN: "BOOLEAN", duckdb.TYPE_VARCHAR: "VARCHAR"}

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

// TestEveryStatementPrepares prepares every embedded ingest statement
// against a migrated warehouse, on a connection holding ingest's staging
// tables (as load.go's connections do), so a renamed column or table fails
// here rather than halfway through someone's ingest.
func TestEveryStatementPrepares(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, "")
	conn, err := w.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := prepareConn(ctx, conn); err != nil {
		t.Fatal(err)
	}
	// A statement reads rows Go hands it as a virtual table (a table
	// function): stand in an empty table of its columns.
	stand := map[string][]schema.Column{
		schema.RowsTable: linkColumns,
	}
	for table, cols := range stand {
		var defs []string
		for _, c := range cols {
			defs = append(defs, c.Name+" "+sqlType[c.Type])
		}
		if _, err := conn.ExecContext(ctx, "CREATE TEMP TABLE "+table+" ("+strings.Join(defs, ", ")+")"); err != nil {
			t.Fatal(err)
		}
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
// can ask stmt for is embedded (the literal stmt("x") calls), and finds
// embedded files nothing names.
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
var nameArgs = map[string]int{"stmt": 0, "exec": 0}

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
// stmt, such as exec("launch_sites", ...)).
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
