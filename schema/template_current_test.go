package schema_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/migrations"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// (An external test package: the template holds the default catalog,
// which ingest installs, and ingest imports schema.)

var updateTemplate = flag.Bool("update-template", false, "rewrite "+schema.TemplateFile+" from the embedded migrations and catalog")

// TestTemplateCurrent: an in-memory warehouse copied from the embedded
// template equals a warehouse file the migrations build with the default
// catalog installed (tables, columns, constraints, views, macros, comments,
// sequences, indexes and every row), so copying it instead of migrating
// and installing changes nothing a query can see. After adding a
// migration, editing the embedded catalog or upgrading DuckDB, refresh it
// with:
//
//	go test ./schema -run TestTemplateCurrent -update-template
func TestTemplateCurrent(t *testing.T) {
	ctx := context.Background()
	if *updateTemplate {
		writeTemplate(t)
		t.Log("rebuild the binary or test to embed the new template")
		return
	}
	// Against a warehouse file the migrations build: DuckDB stores macros
	// and views in a file in a form it prints differently from the one it
	// parsed (parentheses, quoted type names, a CTE's MATERIALIZED), and
	// the template is such a file, as every stored warehouse is.
	// (Reopened: until then the migrating process keeps what it parsed.)
	file := filepath.Join(t.TempDir(), "migrated.duckdb")
	if err := buildWarehouse(t, file, 1).Close(); err != nil {
		t.Fatal(err)
	}
	migrated, err := schema.Open(ctx, file, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer migrated.Close()
	copied, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Close()
	want, got := dumpWarehouse(t, migrated.DB), dumpWarehouse(t, copied.DB)
	if got != want {
		t.Errorf("the embedded template is not what the migrations and the default catalog build; run go test ./schema -run TestTemplateCurrent -update-template\n%s",
			firstDiff(got, want))
	}
	// A template older than the migrations still gives a current
	// warehouse: Open applies what it lacks (checked by the versions in
	// the dump above when it is current; here by the count of pending).
	ms, err := schema.LoadMigrations(migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := schema.Pending(ctx, copied.DB, ms); err != nil || len(p) != 0 {
		t.Errorf("pending after a template copy: %v %v", p, err)
	}
}

// buildWarehouse migrates a new warehouse file at path and installs the
// default catalog in it: what the template holds. threads is DuckDB's
// (0: its default, as the template is written).
func buildWarehouse(t *testing.T, path string, threads int) *schema.Warehouse {
	t.Helper()
	ctx := context.Background()
	w, err := schema.Open(ctx, path, schema.Options{NoTemplate: true, Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	if err := ingest.InstallCatalog(ctx, w.DB, catalog.Default()); err != nil {
		w.Close()
		t.Fatal(err)
	}
	return w
}

// writeTemplate builds a fresh file and stores it gzipped as the template.
func writeTemplate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "warehouse.duckdb")
	w := buildWarehouse(t, path, 0)
	if _, err := w.DB.ExecContext(ctx, "CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(schema.TemplateFile, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dumpWarehouse is everything a query could tell apart, as sorted text.
func dumpWarehouse(t *testing.T, db *sql.DB) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, q := range []string{
		`SELECT table_name, comment, sql FROM duckdb_tables() WHERE database_name = current_database() ORDER BY ALL`,
		`SELECT table_name, column_name, data_type, column_default, is_nullable, comment FROM duckdb_columns() WHERE database_name = current_database() ORDER BY ALL`,
		`SELECT table_name, constraint_type, constraint_text FROM duckdb_constraints() WHERE database_name = current_database() ORDER BY ALL`,
		`SELECT view_name, comment, sql FROM duckdb_views() WHERE database_name = current_database() AND NOT internal ORDER BY ALL`,
		`SELECT function_name, function_type, parameters::VARCHAR, macro_definition, comment FROM duckdb_functions() WHERE database_name = current_database() AND NOT internal ORDER BY ALL`,
		`SELECT sequence_name, start_value, increment_by, comment FROM duckdb_sequences() WHERE database_name = current_database() ORDER BY ALL`,
		`SELECT index_name, table_name, sql FROM duckdb_indexes() WHERE database_name = current_database() ORDER BY ALL`,
		`SELECT version, name FROM schema_migrations ORDER BY ALL`,
	} {
		b.WriteString(dumpQuery(t, db, q))
	}
	// Every row of every table but schema_migrations (its applied_at is a
	// time): a digest per table.
	rows, err := db.QueryContext(ctx, `SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND table_name <> 'schema_migrations' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	for _, tb := range tables {
		b.WriteString(dumpQuery(t, db, fmt.Sprintf(`SELECT '%s', count(*), bit_xor(hash(x::VARCHAR)) FROM "%s" x`, tb, tb)))
	}
	return b.String()
}

func dumpQuery(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	return "-- " + q + "\n" + schematest.Dump(t, db, q)
}

// firstDiff shows the first differing line of two dumps.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, gl, wl)
		}
	}
	return "(equal)"
}
