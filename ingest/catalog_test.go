package ingest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// openWarehouse is a migrated warehouse of the test's own.
func openWarehouse(t *testing.T) *sql.DB {
	t.Helper()
	return schematest.Open(t, "").DB
}

func strs(t *testing.T, v any) []string {
	t.Helper()
	items, ok := v.([]any)
	if !ok {
		t.Fatalf("list column scanned as %T", v)
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.(string)
	}
	return out
}

// readBack rebuilds a catalog from the warehouse tables.
func readBack(t *testing.T, db *sql.DB, wantHash string) *catalog.Catalog {
	t.Helper()
	ctx := context.Background()
	c := &catalog.Catalog{}
	steps := map[string][][]string{}
	rows, err := db.QueryContext(ctx, `SELECT id, step_no, keywords FROM fusion_catalog_steps ORDER BY id, step_no`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var no int
		var kw any
		if err := rows.Scan(&id, &no, &kw); err != nil {
			t.Fatal(err)
		}
		if no != len(steps[id])+1 {
			t.Errorf("%s: step_no %d after %d steps", id, no, len(steps[id]))
		}
		steps[id] = append(steps[id], strs(t, kw))
	}
	rows.Close()

	rows, err = db.QueryContext(ctx, `SELECT id, ordinal, name, framework, origin, fused, steps, ordered,
		max_gap_ns, max_between, models_any, models_none, min_tp, min_share, likely_share,
		priority, subsumes, sources, switch, rationale, catalog_version, catalog_hash
		FROM fusion_catalog ORDER BY ordinal`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var f catalog.Fusion
		var ordinal, nSteps, version int
		var gapNS int64
		var fused, modelsAny, modelsNone, subsumes, sources any
		var sw sql.NullString
		var hash string
		if err := rows.Scan(&f.ID, &ordinal, &f.Name, &f.Framework, &f.Origin, &fused, &nSteps, &f.Ordered,
			&gapNS, &f.MaxBetween, &modelsAny, &modelsNone, &f.MinTP, &f.MinShare, &f.LikelyShare,
			&f.Priority, &subsumes, &sources, &sw, &f.Rationale, &version, &hash); err != nil {
			t.Fatal(err)
		}
		if ordinal != len(c.Fusions) || hash != wantHash || nSteps != len(steps[f.ID]) {
			t.Errorf("%s: ordinal %d, hash %s, steps %d/%d", f.ID, ordinal, hash, nSteps, len(steps[f.ID]))
		}
		c.Version = version
		f.Fused, f.ModelsAny, f.ModelsNone = strs(t, fused), strs(t, modelsAny), strs(t, modelsNone)
		f.Subsumes, f.Sources, f.Switch = strs(t, subsumes), strs(t, sources), sw.String
		f.MaxGapUS = float64(gapNS) / 1000
		f.Chain = steps[f.ID]
		if f.Chain == nil {
			f.Chain = [][]string{}
		}
		c.Fusions = append(c.Fusions, f)
	}
	rows.Close()

	rows, err = db.QueryContext(ctx, `SELECT id, ordinal, name, framework, origin, keywords, sources, switch,
		rationale, catalog_version, catalog_hash FROM overlap_catalog ORDER BY ordinal`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var o catalog.Overlap
		var ordinal, version int
		var keywords, sources any
		var sw sql.NullString
		var hash string
		if err := rows.Scan(&o.ID, &ordinal, &o.Name, &o.Framework, &o.Origin, &keywords, &sources, &sw,
			&o.Rationale, &version, &hash); err != nil {
			t.Fatal(err)
		}
		if ordinal != len(c.Overlaps) || hash != wantHash || version != c.Version && len(c.Fusions) > 0 {
			t.Errorf("%s: ordinal %d, hash %s, version %d", o.ID, ordinal, hash, version)
		}
		c.Version = version
		o.Keywords, o.Sources, o.Switch = strs(t, keywords), strs(t, sources), sw.String
		c.Overlaps = append(c.Overlaps, o)
	}
	return c
}

// comparable strips what the tables do not hold (the file name) and spells
// absent lists as empty, as the NOT NULL list columns do. (Entries are
// compared by their JSON form, which leaves out their positions in the
// file.)
func comparable(c *catalog.Catalog) *catalog.Catalog {
	out := &catalog.Catalog{Version: c.Version}
	empty := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	for _, f := range c.Fusions {
		f.Fused, f.ModelsAny, f.ModelsNone = empty(f.Fused), empty(f.ModelsAny), empty(f.ModelsNone)
		f.Subsumes, f.Sources = empty(f.Subsumes), empty(f.Sources)
		if f.Chain == nil {
			f.Chain = [][]string{}
		}
		out.Fusions = append(out.Fusions, f)
	}
	for _, o := range c.Overlaps {
		o.Keywords, o.Sources = empty(o.Keywords), empty(o.Sources)
		out.Overlaps = append(out.Overlaps, o)
	}
	return out
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}

func assertInstalled(t *testing.T, db *sql.DB, want *catalog.Catalog) {
	t.Helper()
	got := readBack(t, db, want.Hash())
	w := comparable(want)
	if len(got.Fusions) != len(w.Fusions) || len(got.Overlaps) != len(w.Overlaps) {
		t.Fatalf("tables hold %d fusions and %d overlaps, want %d and %d",
			len(got.Fusions), len(got.Overlaps), len(w.Fusions), len(w.Overlaps))
	}
	for i := range w.Fusions {
		if !sameJSON(t, got.Fusions[i], w.Fusions[i]) {
			t.Errorf("fusion %d read back as\n%+v\nwant\n%+v", i, got.Fusions[i], w.Fusions[i])
		}
	}
	for i := range w.Overlaps {
		if !sameJSON(t, got.Overlaps[i], w.Overlaps[i]) {
			t.Errorf("overlap %d read back as\n%+v\nwant\n%+v", i, got.Overlaps[i], w.Overlaps[i])
		}
	}
	if got.Version != w.Version {
		t.Errorf("catalog_version %d, want %d", got.Version, w.Version)
	}
}

// clearCatalog empties the catalog tables: a warehouse as the migrations
// leave it, before the template held the default catalog.
func clearCatalog(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, table := range []string{"fusion_catalog_steps", "fusion_catalog", "overlap_catalog"} {
		if _, err := db.Exec("DELETE FROM " + table); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInstallRoundTrip: a new warehouse holds the default catalog (from
// the template) as installing it writes it; installed into empty tables
// it reads back the same.
func TestInstallRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openWarehouse(t)
	c := catalog.Default()
	if h, err := InstalledCatalogHash(ctx, db); err != nil || h != c.Hash() {
		t.Fatalf("new warehouse: hash %q, %v; want the default's, %s", h, err, c.Hash())
	}
	assertInstalled(t, db, c)
	clearCatalog(t, db)
	if h, err := InstalledCatalogHash(ctx, db); err != nil || h != "" {
		t.Fatalf("emptied: hash %q, %v", h, err)
	}
	if err := InstallCatalog(ctx, db, c); err != nil {
		t.Fatal(err)
	}
	assertInstalled(t, db, c)
	if h, err := InstalledCatalogHash(ctx, db); err != nil || h != c.Hash() {
		t.Fatalf("installed hash %q, %v; want %s", h, err, c.Hash())
	}
}

func TestInstallTwiceIsNoOp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openWarehouse(t)
	clearCatalog(t, db)
	if changed, err := installCatalog(ctx, db, catalog.Default()); err != nil || !changed {
		t.Fatalf("first install: changed=%v, %v", changed, err)
	}
	// Mark a row behind Install's back: a rewrite would erase the mark.
	if _, err := db.ExecContext(ctx, `UPDATE fusion_catalog SET rationale = 'marked' WHERE ordinal = 0`); err != nil {
		t.Fatal(err)
	}
	changed, err := installCatalog(ctx, db, catalog.Default())
	if err != nil || changed {
		t.Fatalf("second install: changed=%v, %v", changed, err)
	}
	var r string
	if err := db.QueryRowContext(ctx, `SELECT rationale FROM fusion_catalog WHERE ordinal = 0`).Scan(&r); err != nil {
		t.Fatal(err)
	}
	if r != "marked" {
		t.Errorf("second install rewrote the tables (rationale %q)", r)
	}
}

// A user's --catalog FILE replaces the default, and dropping the flag puts
// the default back.
func TestInstallReplacesAndBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openWarehouse(t)
	def := catalog.Default()
	// A user's file: the default's first entries, renamed.
	user := &catalog.Catalog{Version: def.Version, File: "user.yaml",
		Fusions: slices.Clone(def.Fusions[:3]), Overlaps: slices.Clone(def.Overlaps[:2])}
	user.Fusions[0].Name += " (mine)"
	// (the default is there from the template)
	for _, c := range []*catalog.Catalog{user, def, user, def} {
		changed, err := installCatalog(ctx, db, c)
		if err != nil || !changed {
			t.Fatalf("install %s: changed=%v, %v", c.File, changed, err)
		}
		assertInstalled(t, db, c)
	}
}

func TestInstallRejectsInvalidCatalog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openWarehouse(t)
	def := catalog.Default()
	if err := InstallCatalog(ctx, db, def); err != nil {
		t.Fatal(err)
	}
	bad := catalog.Default()
	bad.Fusions[1].Subsumes = []string{"no-such-entry"}
	err := InstallCatalog(ctx, db, bad)
	if !errors.Is(err, catalog.ErrInvalid) || !errors.Is(err, catalog.ErrReference) {
		t.Fatalf("got %v; want an ErrReference", err)
	}
	assertInstalled(t, db, def)
}

// catalog_keywords holds every keyword once per place it is listed, in the
// forms the contract matches on.
func TestCatalogKeywordsView(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openWarehouse(t)
	c := catalog.Default()
	if err := InstallCatalog(ctx, db, c); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, f := range c.Fusions {
		want += len(f.Fused)
		for _, st := range f.Chain {
			want += len(st)
		}
	}
	for _, o := range c.Overlaps {
		want += len(o.Keywords)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM catalog_keywords`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Errorf("catalog_keywords has %d rows, catalog lists %d keywords", n, want)
	}
	var lower, compacted string
	err := db.QueryRowContext(ctx, `SELECT keyword_lower, keyword_compact FROM catalog_keywords
		WHERE kind = 'fused' AND id = 'trtllm-flashinfer-fused-add-rmsnorm' AND keyword = 'flashinfer::norm::FusedAddRMSNormKernel'`).Scan(&lower, &compacted)
	if err != nil {
		t.Fatal(err)
	}
	if lower != "flashinfer::norm::fusedaddrmsnormkernel" || compacted != "flashinfernormfusedaddrmsnormkernel" {
		t.Errorf("forms %q, %q", lower, compacted)
	}
	// The Go-side compaction Validate uses must agree with the view's.
	rows, err := db.QueryContext(ctx, `SELECT keyword, keyword_compact FROM catalog_keywords`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, kc string
		if err := rows.Scan(&k, &kc); err != nil {
			t.Fatal(err)
		}
		if catalog.Compact(k) != kc {
			t.Errorf("%q: Go compacts to %q, SQL to %q", k, catalog.Compact(k), kc)
		}
	}
}
