package schema

import (
	"context"
	"strings"
	"testing"
)

// TestEveryColumnDescribed: every column of every table and view of a new
// warehouse (DuckDB's own views aside) has a description, a DuckDB comment
// that `tracehouse schema NAME` prints, so a column cannot land without
// one: describe it in sqllib/columns.sql (or in its migration). A
// description is one or more sentences of text, not a placeholder.
func TestEveryColumnDescribed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := Open(ctx, Memory, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rows, err := w.DB.QueryContext(ctx, `
		WITH objects AS (
			SELECT table_name AS name, 'table' AS kind FROM duckdb_tables()
			WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal
			UNION ALL
			SELECT view_name, 'view' FROM duckdb_views()
			WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal)
		SELECT o.kind, c.table_name, c.column_name, coalesce(c.comment, '')
		FROM duckdb_columns() c JOIN objects o ON o.name = c.table_name
		WHERE c.database_name = current_database() AND c.schema_name = 'main' AND NOT c.internal
		ORDER BY c.table_name, c.column_index`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n, tables := 0, map[string]bool{}
	for rows.Next() {
		var kind, table, column, comment string
		if err := rows.Scan(&kind, &table, &column, &comment); err != nil {
			t.Fatal(err)
		}
		n++
		tables[table] = true
		switch c := strings.TrimSpace(comment); {
		case c == "":
			t.Errorf("%s %s: column %s has no description (add one to sqllib/columns.sql)", kind, table, column)
		case len(strings.Fields(c)) < 2 || c != comment:
			t.Errorf("%s %s: column %s: description %q is not a sentence", kind, table, column, comment)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// the query itself: it saw the warehouse's tables and views
	for _, name := range []string{"kernels", "traces", "kernel_events", "idle_gap_store", "kernel_overlap"} {
		if !tables[name] {
			t.Errorf("no columns of %s were checked", name)
		}
	}
	if n < 300 {
		t.Errorf("only %d columns checked", n)
	}
}

// TestSiteDescriptionsAgree: kernels, launches and cpu_ops take their
// Python site by one rule (the innermost framework frame, else other user
// code), and their descriptions say so alike. Before, kernels.site_id (from
// migration 0010) said a framework frame only, which is not what ingest
// stores when no framework frame is open.
func TestSiteDescriptionsAgree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := Open(ctx, Memory, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, table := range []string{"kernels", "launches", "cpu_ops"} {
		var c string
		if err := w.DB.QueryRowContext(ctx, `SELECT comment FROM duckdb_columns() WHERE database_name = current_database()
			AND schema_name = 'main' AND table_name = ? AND column_name = 'site_id'`, table).Scan(&c); err != nil {
			t.Fatalf("%s.site_id: %v", table, err)
		}
		for _, want := range []string{"serving-framework code before other user code", "wrappers never"} {
			if !strings.Contains(c, want) {
				t.Errorf("%s.site_id: %q does not say %q", table, c, want)
			}
		}
	}
}
