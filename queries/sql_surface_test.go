package queries

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/schema"
)

// TestOverlapKernelsTakesIDOrLabel: the public overlap_kernels macro gives,
// for a run named by id or by label, exactly the rows of the internal
// computation for that run_id; an id wins over a label that reads like it.
func TestOverlapKernelsTakesIDOrLabel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	db := f.db
	f.run(1, "base")
	f.run(2, "1") // a label that reads like run 1's id
	for tr := 1; tr <= 4; tr++ {
		f.trace(tr, 1+(tr-1)/2, (tr-1)%2, "decode", "formal")
	}
	for id := 1; id <= 6; id++ {
		c := randomCategories[id]
		f.name(id, "", fmt.Sprintf("k%d", id), "", c[0], c[1])
	}
	rng := newRand(11)
	f.kernels(append(randomKernels(rng, 60, 1, 1, 1<<32), randomKernels(rng, 40, 2, 3, 3<<32)...)...)

	run1 := dumpOverlap(t, db, "kernel_overlap_for(1)")
	run2 := dumpOverlap(t, db, "kernel_overlap_for(2)")
	if run1 == "" || run2 == "" || run1 == run2 {
		t.Fatal("fixture: both runs need distinct kernels")
	}
	cols := `kernel_id, trace_id, run_id, rank, stage, device, stream, name_id, ts_ns, dur_ns,
		hidden_ns, hidden_by_compute_ns, exclusive_ns, start_rank, starts_before_end,
		prev_kernel_id, next_kernel_id, union_share_ns`
	for _, c := range []struct{ call, want string }{
		{"overlap_kernels(1)", run1},
		{"overlap_kernels('base')", run1},
		{"overlap_kernels('1')", run1},
		{"overlap_kernels(2)", run2},
	} {
		got := dumpOverlap(t, db, "(SELECT "+cols+" FROM "+c.call+")")
		want := dumpOverlap(t, db, "(SELECT "+cols+" FROM kernel_overlap_for("+map[bool]string{true: "1", false: "2"}[c.want == run1]+"))")
		if got != want {
			t.Errorf("%s differs from kernel_overlap_for of its run", c.call)
		}
	}
	var n int
	err := db.QueryRow(`SELECT count(*) FROM overlap_kernels('no such run')`).Scan(&n)
	if err == nil || !strings.Contains(err.Error(), "no run with id or label no such run") {
		t.Errorf("unknown label: want an error naming it, got %v (%d rows)", err, n)
	}
}

// TestSchemaObjectsDescribeEverything: every table and view a migration
// creates carries a description, and one table's columns come back in
// table order with their comments.
func TestSchemaObjectsDescribeEverything(t *testing.T) {
	t.Parallel()
	db := newFixture(t).db
	ctx := context.Background()
	objs, err := SchemaObjects(ctx, db, "")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.Kind]++
		if (o.Kind == "table" || o.Kind == "view") && o.Description == "" {
			t.Errorf("%s %s has no COMMENT ON", o.Kind, o.Name)
		}
		if o.Name[0] == '_' {
			t.Errorf("internal macro %s listed", o.Name)
		}
	}
	var tables, views int
	if err := db.QueryRow(`SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' AND NOT temporary`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal AND NOT temporary`).Scan(&views); err != nil {
		t.Fatal(err)
	}
	if kinds["table"] != tables || kinds["view"] != views {
		t.Errorf("listed %d tables and %d views, the catalog has %d and %d", kinds["table"], kinds["view"], tables, views)
	}

	cols, err := SchemaObjects(ctx, db, "kernels")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT column_name, data_type FROM information_schema.columns
		WHERE table_name = 'kernels' ORDER BY ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		if i >= len(cols) || cols[i].Kind != "column" || cols[i].Name != name || cols[i].Type.String != typ {
			t.Fatalf("column %d: want %s %s, got %+v", i, name, typ, cols)
		}
		i++
	}
	if i != len(cols) || i == 0 {
		t.Fatalf("kernels: %d columns in information_schema, %d listed", i, len(cols))
	}
	if cols[0].Name != "kernel_id" || cols[0].Description == "" {
		t.Errorf("kernels.kernel_id: want its comment, got %+v", cols[0])
	}
}

// TestSchemaObjectsOnceWithAStaleLibrary: a read-only open of a warehouse
// whose SQL library is older than the binary's gives its connections the
// library as temporary copies; the listing still shows each object, and
// each parameter of a macro, once.
func TestSchemaObjectsOnceWithAStaleLibrary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.duckdb")
	w, err := schema.Open(ctx, path, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.DB.Exec(`CREATE OR REPLACE MACRO _sqllib_hash() AS 'stale'`); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := schema.Open(ctx, path, schema.Options{ReadOnly: true, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var temp int
	if err := r.DB.QueryRow(`SELECT count(*) FROM duckdb_functions() WHERE database_name = 'temp' AND function_name = 'overlap_kernels'`).Scan(&temp); err != nil || temp != 1 {
		t.Fatalf("fixture: %d temporary overlap_kernels (%v)", temp, err)
	}
	objs, err := SchemaObjects(ctx, r.DB, "")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, o := range objs {
		if seen[o.Kind+" "+o.Name] {
			t.Errorf("%s %s listed twice", o.Kind, o.Name)
		}
		seen[o.Kind+" "+o.Name] = true
	}
	if !seen["table macro overlap_kernels"] || !seen["view kernel_events"] {
		t.Errorf("listing lacks the library: %v", seen)
	}
	params, err := SchemaObjects(ctx, r.DB, "overlap_kernels")
	if err != nil {
		t.Fatal(err)
	}
	if len(params) != 3 {
		t.Errorf("overlap_kernels: %d parameters listed, want 3: %+v", len(params), params)
	}
	cols, err := SchemaObjects(ctx, r.DB, "kernel_events")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, c := range cols {
		names[c.Name]++
		if names[c.Name] > 1 {
			t.Errorf("kernel_events.%s listed twice", c.Name)
		}
	}
}
