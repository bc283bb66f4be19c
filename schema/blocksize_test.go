package schema

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// blockSizeOf reads the storage block size DuckDB reports for w's database.
func blockSizeOf(t *testing.T, w *Warehouse) int64 {
	t.Helper()
	var n int64
	if err := w.DB.QueryRow(`SELECT block_size FROM pragma_database_size()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// storageVersionOf reads the storage format DuckDB reports for w's
// database ("v1.5.0+": the format of DuckDB v1.5.0 and later).
func storageVersionOf(t *testing.T, w *Warehouse) string {
	t.Helper()
	var v sql.NullString
	if err := w.DB.QueryRow(`SELECT tags['storage_version'] FROM duckdb_databases() WHERE NOT internal`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v.String
}

// TestStorageFormat: warehouses tracehouse creates (a file, the in-memory
// template copy) use BlockSize and StorageVersion; a warehouse made with
// DuckDB's defaults (another block size, the v1.0 format, as older
// tracehouse builds made) still opens, migrates, takes writes and keeps
// its own size and format.
func TestStorageFormat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	for _, path := range []string{filepath.Join(dir, "new.duckdb"), Memory} {
		w, err := Open(ctx, path, Options{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		if n := blockSizeOf(t, w); n != BlockSize {
			t.Errorf("%s: block size %d, want %d", path, n, BlockSize)
		}
		if v := storageVersionOf(t, w); v != StorageVersion+"+" {
			t.Errorf("%s: storage version %q, want %q", path, v, StorageVersion+"+")
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// Another block size, no migrations yet.
	const other = 262144
	old := filepath.Join(dir, "old.duckdb")
	c, err := duckdb.NewConnector(old+"?default_block_size="+strconv.Itoa(other), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw := sql.OpenDB(c)
	// (a warehouse begun before any migration: tracehouse's version table,
	// empty, beside a table of its own)
	if _, err := raw.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL);
		CREATE TABLE keep(x INTEGER); INSERT INTO keep VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	for _, readOnly := range []bool{false, true} {
		w, err := Open(ctx, old, Options{Threads: 1, ReadOnly: readOnly})
		if err != nil {
			t.Fatalf("read-only %v: %v", readOnly, err)
		}
		if n := blockSizeOf(t, w); n != other {
			t.Errorf("read-only %v: block size %d, want the file's %d", readOnly, n, other)
		}
		if v := storageVersionOf(t, w); v != "v1.0.0+" {
			t.Errorf("read-only %v: storage version %q, want the file's v1.0.0+", readOnly, v)
		}
		if !readOnly {
			if _, err := w.DB.Exec(`INSERT INTO keep VALUES (8)`); err != nil {
				t.Fatal(err)
			}
		}
		var sum int
		if err := w.DB.QueryRow(`SELECT sum(x) FROM keep`).Scan(&sum); err != nil || sum != 15 {
			t.Errorf("read-only %v: sum %d, %v; want 15", readOnly, sum, err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWritersSkipCostlyCompression: a writer's checkpoints do not try FSST
// or zstd (open.go says why), in a file and in memory; DuckDB spells the
// setting back in its own case and order, so each name is looked for.
func TestWritersSkipCostlyCompression(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, path := range []string{filepath.Join(t.TempDir(), "w.duckdb"), Memory} {
		w, err := Open(ctx, path, Options{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := w.DB.QueryRowContext(ctx, `SELECT current_setting('disabled_compression_methods')`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		w.Close()
		for _, m := range strings.Split(disabledCompression, ",") {
			if !strings.Contains(strings.ToLower(got), m) {
				t.Errorf("%s: disabled_compression_methods = %q, want %s in it", path, got, m)
			}
		}
	}
}
