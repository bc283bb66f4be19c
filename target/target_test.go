package target

import (
	"context"
	"slices"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// userCatalog is a user's catalog (--catalog FILE): a part of the default
// one, a fuse pattern renamed, so its hash is not the default's, which new
// warehouses hold.
func userCatalog() *catalog.Catalog {
	def := catalog.Default()
	cat := &catalog.Catalog{Version: def.Version, File: "user.yaml",
		Fusions: slices.Clone(def.Fusions[:3]), Overlaps: slices.Clone(def.Overlaps[:2])}
	cat.Fusions[0].Name += " (mine)"
	return cat
}

// TestOpenInstallsTheCatalog: a report's Open leaves the catalog it was
// given installed. A read-only warehouse file without it is opened again
// for writing; a lake (an in-memory database whose catalog tables are
// writable) is opened once and takes the catalog where it is, since each
// opening of a lake reads every table's files. (A user's catalog: new
// warehouses hold the default one.)
func TestOpenInstallsTheCatalog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := userCatalog()
	path := schematest.Copy(t, schematest.Migrated(t))
	for _, c := range []struct {
		name  string
		open  func(write bool) (*schema.Warehouse, error)
		calls []bool // the write argument of each opening
	}{
		{"file", func(write bool) (*schema.Warehouse, error) {
			return schema.Open(ctx, path, schema.Options{Threads: 1, ReadOnly: !write})
		}, []bool{false, true}},
		{"lake", func(bool) (*schema.Warehouse, error) {
			w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
			if err != nil {
				return nil, err
			}
			lw := *w
			lw.Lake, lw.ReadOnly = t.TempDir(), true
			return &lw, nil
		}, []bool{false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls []bool
			opener := func(_ context.Context, write bool) (*schema.Warehouse, error) {
				calls = append(calls, write)
				return c.open(write)
			}
			w, err := Open(ctx, opener, false, catalog.Parsed(cat), func(n string) { t.Errorf("notice: %s", n) })
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if !slices.Equal(calls, c.calls) {
				t.Errorf("opened with write = %v, want %v", calls, c.calls)
			}
			h, err := ingest.InstalledCatalogHash(ctx, w.DB)
			if err != nil {
				t.Fatal(err)
			}
			if h != cat.Hash() {
				t.Errorf("installed catalog %q, want %q", h, cat.Hash())
			}
		})
	}
}

// TestResolveInMemorySavesNothing: a path ingested into a warehouse file
// is finished (overlap, steps, fuse-pattern and overlap-table rows saved);
// into an in-memory warehouse only the catalog is installed, as the
// command that made it computes what it reads. Either holds the catalog
// Resolve was given after: a user's, as new warehouses hold the default.
func TestResolveInMemorySavesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := userCatalog()
	// one trace of one rank: what is saved is per run
	path := "../testdata/demo/trtllm-llama"
	for _, c := range []struct {
		name  string
		db    string
		saved int
	}{
		{"file", schematest.Copy(t, schematest.Migrated(t)), 1},
		{"memory", schema.Memory, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := schema.Open(ctx, c.db, schema.Options{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			r, err := Resolve(ctx, w, path, ingest.Options{}, catalog.Parsed(cat))
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Runs) != 1 {
				t.Fatalf("runs %+v", r.Runs)
			}
			for _, table := range []string{"kernel_overlap_runs", "step_store_runs", "fusion_store_runs", "overlap_row_runs"} {
				var n int
				if err := w.DB.QueryRow(`SELECT count(DISTINCT run_id) FROM ` + table).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != c.saved {
					t.Errorf("%s: %d run(s) saved, want %d", table, n, c.saved)
				}
			}
			if h, err := ingest.InstalledCatalogHash(ctx, w.DB); err != nil || h != cat.Hash() {
				t.Errorf("installed catalog %q (%v), want %q", h, err, cat.Hash())
			}
		})
	}
}

// TestNeeds: a path is ingested (write) and, like a selector, leaves the
// runs a lake must read unknown until it is open (nil: every run); labels
// alone name exactly the runs to read.
func TestNeeds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() // a path that exists
	for _, c := range []struct {
		args   []string
		write  bool
		labels []string
	}{
		{nil, false, nil},
		{[]string{"a", "", "b"}, false, []string{"a", "b"}},
		{[]string{"a", "@latest"}, false, nil},
		{[]string{"tag:k=v", "a"}, false, nil},
		{[]string{"a", "@latest~2"}, false, nil},
		{[]string{"a", dir}, true, nil},
		{[]string{"@latest", dir}, true, nil},
	} {
		write, labels := Needs(c.args...)
		if write != c.write || !slices.Equal(labels, c.labels) || (labels == nil) != (c.labels == nil) {
			t.Errorf("Needs(%q) = %v, %q; want %v, %q", c.args, write, labels, c.write, c.labels)
		}
	}
}
