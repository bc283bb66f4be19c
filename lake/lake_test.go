package lake

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
)

const demo = "../testdata/demo"

var (
	demoOnce sync.Once
	demoPath string
	demoErr  error
)

// demoWarehouse is a warehouse file holding testdata/demo, ingested once
// per test binary (ingest.Finish run); tests open it read-only.
func demoWarehouse(t *testing.T) string {
	t.Helper()
	demoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lake-demo-")
		if err != nil {
			demoErr = err
			return
		}
		demoPath = filepath.Join(dir, "demo.duckdb")
		ctx := context.Background()
		w, err := schema.Open(ctx, demoPath, schema.Options{})
		if err != nil {
			demoErr = err
			return
		}
		defer w.Close()
		res, err := ingest.Ingest(ctx, w, []string{demo}, ingest.Options{Jobs: 1})
		if err == nil && res.Failed() > 0 {
			err = fmt.Errorf("%d demo files failed", res.Failed())
		}
		if err == nil {
			err = ingest.Finish(ctx, w.DB, catalog.Default())
		}
		demoErr = err
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoPath
}

func openDemo(t *testing.T) *schema.Warehouse {
	t.Helper()
	w, err := schema.Open(context.Background(), demoWarehouse(t), schema.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func TestMain(m *testing.M) {
	code := m.Run()
	if demoPath != "" {
		os.RemoveAll(filepath.Dir(demoPath))
	}
	os.Exit(code)
}

// dump is every row of a table as sorted text lines.
func dump(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestExportRoundTrip writes the demo warehouse into an empty lake and
// reads every table back through the lake's views: the same rows, ids
// included (an empty lake keeps the warehouse's ids).
func TestExportRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := openDemo(t)
	dir := t.TempDir()
	res, err := Write(ctx, src.DB, dir, WriteOptions{Batch: 5})
	if err != nil {
		t.Fatal(err)
	}
	var traces int
	if err := src.DB.QueryRow(`SELECT count(*) FROM traces`).Scan(&traces); err != nil {
		t.Fatal(err)
	}
	if res.Written() != traces {
		t.Fatalf("wrote %d traces, want %d: %+v", res.Written(), traces, res.Traces)
	}
	lk, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	for _, tb := range Tables {
		q := "SELECT * FROM " + tb.Name
		if tb.Name == "kernel_names" || tb.Name == "sites" {
			// the lake holds the names its traces use
			q += fmt.Sprintf(" WHERE %[1]s IN (SELECT %[1]s FROM kernels UNION SELECT %[1]s FROM launches UNION SELECT %[1]s FROM cpu_ops UNION SELECT %[1]s FROM py_frame_events)", tb.key)
			if tb.Name == "kernel_names" {
				q = "SELECT * FROM kernel_names WHERE name_id IN (SELECT name_id FROM kernels)"
			}
		}
		want, got := dump(t, src.DB, q), dump(t, lk.DB, q)
		if tb.store == storeOverlap {
			// sweep positions are renumbered per trace
			q = "SELECT * EXCLUDE (start_rank, starts_before_end) FROM " + tb.Name
			want, got = dump(t, src.DB, q), dump(t, lk.DB, q)
		}
		if len(want) == 0 {
			t.Errorf("%s: the demo warehouse has no rows", tb.Name)
		}
		if !slices.Equal(want, got) {
			t.Errorf("%s: lake has %d rows, warehouse %d; first difference:\n%s", tb.Name, len(got), len(want), firstDiff(want, got))
		}
	}
	// Writing again adds nothing.
	res, err = Write(ctx, src.DB, dir, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Written() != 0 || len(res.Traces) != traces {
		t.Errorf("second write: %d written of %d", res.Written(), len(res.Traces))
	}
}

func firstDiff(a, b []string) string {
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return "warehouse: " + trunc(x) + "\nlake:      " + trunc(y)
		}
	}
	return ""
}

func trunc(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return strings.TrimSpace(s)
}
