package ingest

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestCases runs the .txtar cases under testdata/cases: each holds trace
// files (files/...), optional ingest options (options: key=value lines), and
// pairs of sql/NAME and want/NAME, a query and its expected CSV (with header).
// Expected values in the cases are worked out by hand from the trace text.
func TestCases(t *testing.T) {
	t.Parallel()
	paths, _ := filepath.Glob("testdata/cases/*.txtar")
	if len(paths) == 0 {
		t.Fatal("no cases")
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runCase(t, p)
		})
	}
}

func runCase(t *testing.T, path string) {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	queries := map[string]string{}
	wants := map[string]string{}
	var opt Options
	var wantErrs []string
	for _, f := range ar.Files {
		switch {
		case strings.HasPrefix(f.Name, "files/"):
			p := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(f.Name, "files/")))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(f.Name, "sql/"):
			queries[strings.TrimPrefix(f.Name, "sql/")] = string(f.Data)
		case strings.HasPrefix(f.Name, "want/"):
			wants[strings.TrimPrefix(f.Name, "want/")] = string(f.Data)
		case f.Name == "options":
			for _, l := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
				k, v, _ := strings.Cut(l, "=")
				switch k {
				case "run":
					opt.Run = v
				case "stage":
					opt.Stage = v
				case "framework":
					opt.Framework = v
				case "role":
					opt.Role = v
				}
			}
		case f.Name == "errors":
			for _, l := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
				if l != "" {
					wantErrs = append(wantErrs, l)
				}
			}
		default:
			t.Fatalf("unknown section %s", f.Name)
		}
	}
	ctx := context.Background()
	w := schematest.Open(t, "")
	res, err := Ingest(ctx, w, []string{dir}, opt)
	if err != nil {
		t.Fatal(err)
	}
	var gotErrs []string
	for _, f := range res.Files {
		if f.Err != nil {
			gotErrs = append(gotErrs, strings.ReplaceAll(f.Err.Error(), dir+string(filepath.Separator), ""))
		}
	}
	sort.Strings(gotErrs)
	if strings.Join(gotErrs, "\n") != strings.Join(wantErrs, "\n") {
		t.Errorf("errors:\n got %q\nwant %q", gotErrs, wantErrs)
	}
	names := make([]string, 0, len(queries))
	for n := range queries {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		want, ok := wants[n]
		if !ok {
			t.Fatalf("sql/%s has no want/%s", n, n)
		}
		got, err := queryCSV(ctx, w.DB, queries[n])
		if err != nil {
			t.Fatalf("sql/%s: %v", n, err)
		}
		got = strings.ReplaceAll(got, dir, "DIR")
		if strings.TrimSpace(got) != strings.TrimSpace(want) {
			t.Errorf("sql/%s:\n--- got\n%s\n--- want\n%s", n, got, want)
		}
	}
}

func queryCSV(ctx context.Context, db *sql.DB, q string) (string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	cw := csv.NewWriter(&b)
	cw.Write(cols)
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		rec := make([]string, len(cols))
		for i, v := range vals {
			if v == nil {
				rec[i] = "NULL"
			} else {
				rec[i] = fmt.Sprint(v)
			}
		}
		cw.Write(rec)
	}
	cw.Flush()
	return b.String(), rows.Err()
}
