package schema

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/schema.golden")

// TestSchemaGolden dumps every table, view and column of a freshly migrated
// warehouse, so a change to the user-facing schema shows up in review.
// Refresh with: go test ./schema -run TestSchemaGolden -update
func TestSchemaGolden(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := Open(ctx, Memory, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rows, err := w.DB.QueryContext(ctx, `
		SELECT CASE WHEN t.table_type = 'VIEW' THEN 'view' ELSE 'table' END, c.table_name, c.column_name, c.data_type
		FROM information_schema.columns c
		JOIN information_schema.tables t USING (table_catalog, table_schema, table_name)
		WHERE c.table_schema = 'main'
		ORDER BY 1, 2, c.ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	last := ""
	for rows.Next() {
		var kind, table, col, typ string
		if err := rows.Scan(&kind, &table, &col, &typ); err != nil {
			t.Fatal(err)
		}
		if kind+table != last {
			b.WriteString("\n" + kind + " " + table + "\n")
			last = kind + table
		}
		b.WriteString("  " + col + " " + typ + "\n")
	}
	got := strings.TrimLeft(b.String(), "\n")
	const path = "testdata/schema.golden"
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("schema differs from %s; if intended, run go test ./schema -run TestSchemaGolden -update\n%s", path, got)
	}
}
