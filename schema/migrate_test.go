package schema

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tracehouse/tracehouse/migrations"
)

func TestEmbeddedMigrationsAreConsecutive(t *testing.T) {
	t.Parallel()
	ms, err := LoadMigrations(migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Fatalf("migration %d has version %d", i, m.Version)
		}
	}
}

func TestLoadMigrationsRejectsGap(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"0001_a.sql": {Data: []byte("CREATE TABLE a(x INT);")},
		"0003_c.sql": {Data: []byte("CREATE TABLE c(x INT);")},
	}
	_, err := LoadMigrations(fsys)
	if err == nil || !strings.Contains(err.Error(), "0003_c") {
		t.Fatalf("want an error naming 0003_c, got %v", err)
	}
}

func TestOpenMigratesOnceAndRecordsVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.duckdb")
	w, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := LoadMigrations(migrations.FS)
	v, err := Version(ctx, w.DB)
	if err != nil || v != len(ms) {
		t.Fatalf("version = %d, %v; want %d", v, err, len(ms))
	}
	n, err := Migrate(ctx, w.DB, ms)
	if err != nil || n != 0 {
		t.Fatalf("second migrate applied %d, %v", n, err)
	}
	w.Close()
	// Reopening read-only sees the same schema.
	r, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var tables int
	if err := r.DB.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables() WHERE table_name IN ('runs','traces','kernels','kernel_names','launches','cpu_ops','py_frame_events','sites','annotations')`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 9 {
		t.Fatalf("found %d of 9 tables", tables)
	}
}

func TestOlderBinaryRefusesNewerWarehouse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.duckdb")
	newer := fstest.MapFS{
		"0001_a.sql": {Data: []byte("CREATE TABLE a(x INT);")},
		"0002_b.sql": {Data: []byte("CREATE TABLE b(x INT);")},
	}
	w, err := Open(ctx, path, Options{Migrations: newer})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	older := fstest.MapFS{"0001_a.sql": newer["0001_a.sql"]}
	_, err = Open(ctx, path, Options{Migrations: older})
	var ne *NewerError
	if !errors.As(err, &ne) || ne.Warehouse != 2 || ne.Binary != 1 {
		t.Fatalf("want NewerError{2,1}, got %v", err)
	}
}

func TestFailedMigrationLeavesNoTrace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bad := fstest.MapFS{
		"0001_a.sql": {Data: []byte("CREATE TABLE a(x INT);")},
		"0002_b.sql": {Data: []byte("CREATE TABLE b(x INT);\n\n-- comment\nCREATE TABLE oops(;\n")},
	}
	path := filepath.Join(t.TempDir(), "w.duckdb")
	_, err := Open(ctx, path, Options{Migrations: bad})
	if err == nil || !strings.Contains(err.Error(), "0002_b.sql:4") {
		t.Fatalf("want an error at 0002_b.sql:4, got %v", err)
	}
	good := fstest.MapFS{"0001_a.sql": bad["0001_a.sql"]}
	w, err := Open(ctx, path, Options{Migrations: good})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var n int
	w.DB.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables() WHERE table_name = 'b'`).Scan(&n)
	if n != 0 {
		t.Fatal("table b of the failed migration exists")
	}
}

func TestSplitStatementsLines(t *testing.T) {
	t.Parallel()
	src := "-- header\nCREATE TABLE a(x VARCHAR DEFAULT ';');\n\n/* c; */\nSELECT 1;\n-- trailing\n"
	got := SplitStatements(src)
	if len(got) != 2 || got[0].Line != 2 || got[1].Line != 5 {
		t.Fatalf("got %+v", got)
	}
}
