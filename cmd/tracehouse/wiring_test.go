package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestCommandsCallLibraryStepsNotEachOther: a command's file (one that
// defines a newCmd function) never calls a function another command's file
// defines: commands share steps from library packages, or from the shared
// files of this package (flags, progress, exit codes), and only the wiring
// of subcommands (newCmd...) crosses files (issue 35 item 5).
func TestCommandsCallLibraryStepsNotEachOther(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	parsed := map[string]*ast.File{}
	owner := map[string]string{} // top-level function -> its file
	command := map[string]bool{} // files that define a command
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed[name] = f
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				owner[fd.Name.Name] = name
				if strings.HasPrefix(fd.Name.Name, "newCmd") {
					command[name] = true
				}
			}
		}
	}
	var bad []string
	for name, f := range parsed {
		if !command[name] {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
			if !ok || strings.HasPrefix(id.Name, "newCmd") {
				return true
			}
			if o := owner[id.Name]; o != "" && o != name && command[o] {
				bad = append(bad, name+" calls "+id.Name+" of "+o)
			}
			return true
		})
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}
