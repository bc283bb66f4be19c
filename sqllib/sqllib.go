// Package sqllib is tracehouse's SQL library: the macros and views that
// queries, reports and users read a warehouse through, one .sql file per
// module (overlap, scope, fusion, steps, ...), modelled on Perfetto's SQL
// standard library: public names carry their module's prefix where users
// did not already know them by another, helpers start with `_`, and every
// public macro and view is documented in a comment above it (and by a
// COMMENT ON statement, which `tracehouse schema` shows).
//
// The library has no versions: schema.Open applies it to a warehouse,
// replacing every object an earlier library made, whenever its Hash
// differs from the one stored in the warehouse. Migrations hold only
// tables, indexes and data changes.
package sqllib

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strings"
)

//go:embed *.sql
var files embed.FS

// Modules are the library's modules in the order they are created: DuckDB
// binds the macros and tables a macro or view names when it is created,
// so a module comes after the modules it calls.
var Modules = []string{
	"classify",     // kernel_family, kernel_rule, family_category
	"events",       // kernel_events, py_frames
	"runs",         // _run_id
	"catalog",      // catalog_keywords
	"overlap",      // kernel_overlap_for, overlap_kernels, device busy time, fingerprints
	"scope",        // name_scope, kernel_scope, scope_names, scope_kernels
	"overlap_rows", // _overlap_rows_for: the overlap-opportunity table
	"fusion",       // _fusion_*: catalog matching
	"steps",        // step_*_for, step_*_cached
	"idle",         // idle_gaps, idle_steps: where the GPU waits
	"launch",       // launch_events, launch_kernels, launch_stages: launch overhead
	"spread",       // kernel_spread: duration spread per kernel
	"comm",         // comm_overlap: communication hidden under computation
	"straggler",    // straggler_arrivals, straggler_ranks, straggler_sites: the late rank
	"triage",       // triage_saved: the saved triage report
	"columns",      // descriptions of the tables' and views' columns (after the views)
}

// Module is one file of the library.
type Module struct {
	Name string // the file's name without .sql
	SQL  string
}

// Load returns the modules in creation order, and an error when a file
// is missing from Modules or a module has no file.
func Load() ([]Module, error) {
	return load(files)
}

func load(fsys fs.FS) ([]Module, error) {
	if err := allListed(fsys); err != nil {
		return nil, err
	}
	out := make([]Module, len(Modules))
	for i, m := range Modules {
		b, err := fs.ReadFile(fsys, m+".sql")
		if err != nil {
			return nil, fmt.Errorf("sqllib: module %s: %w", m, err)
		}
		out[i] = Module{Name: m, SQL: string(b)}
	}
	return out, nil
}

// allListed is an error naming a file of fsys that is not in Modules.
func allListed(fsys fs.FS) error {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, m := range Modules {
		listed[m+".sql"] = true
	}
	for _, n := range names {
		if !listed[n] {
			return fmt.Errorf("sqllib: %s is not in sqllib.Modules (which says when it is created)", n)
		}
	}
	return nil
}

// Hash is the library's identity: the sha256 of its modules' names and
// text, in creation order, as lower-case hex.
func Hash(ms []Module) string {
	h := sha256.New()
	for _, m := range ms {
		moduleHeader(h, m.Name, int64(len(m.SQL)))
		io.WriteString(h, m.SQL)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// moduleHeader is what Hash writes before a module's text: its name and
// length (Hash and hashFile, which must agree).
func moduleHeader(h io.Writer, name string, size int64) {
	fmt.Fprintf(h, "%s\n%d\n", name, size)
}

// EmbeddedHash is Hash(Load()), read from the embedded files as it is
// hashed: all a read-only open of a current warehouse needs, which then
// does not copy the library's 200 kB of text (three times: Load's two
// copies and Hash's formatting) into the Go heap of every command.
func EmbeddedHash() (string, error) {
	return hashFS(files)
}

func hashFS(fsys fs.FS) (string, error) {
	if err := allListed(fsys); err != nil {
		return "", err
	}
	h := sha256.New()
	buf := make([]byte, 32<<10)
	for _, m := range Modules {
		if err := hashFile(h, fsys, m, buf); err != nil {
			return "", fmt.Errorf("sqllib: module %s: %w", m, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashFile writes what Hash writes for module m to h: its header
// (moduleHeader) and its text.
func hashFile(h io.Writer, fsys fs.FS, m string, buf []byte) error {
	f, err := fsys.Open(m + ".sql")
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	moduleHeader(h, m, st.Size())
	_, err = io.CopyBuffer(h, f, buf)
	return err
}

// Object is a macro or view the library defines.
type Object struct {
	Kind string // "macro" (scalar or table) or "view"
	Name string
}

// definition matches the statements that create a macro or view.
var definition = regexp.MustCompile(`(?im)^CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?(MACRO|VIEW)\s+([a-z_][a-z0-9_]*)`)

// Definitions lists the macros and views that SQL text creates, in order
// (statements starting a line with CREATE [OR REPLACE] [TEMP] MACRO|VIEW).
func Definitions(sql string) []Object {
	var out []Object
	for _, m := range definition.FindAllStringSubmatch(sql, -1) {
		out = append(out, Object{Kind: strings.ToLower(m[1]), Name: m[2]})
	}
	return out
}
