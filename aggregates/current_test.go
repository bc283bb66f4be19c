package aggregates

import (
	"context"
	"fmt"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
)

// TestSavedCopiesCurrent: the SQL library's one answer per saved copy to
// "is it current" (_overlap_current, _steps_current, _fusion_current,
// _overlap_rows_current), asked after a finish and after each kind of
// change that must make some copies stale and leave the others current:
// a kernel's step, the installed catalog, a kernel name's category, the
// verdict floor asked for. The answer is the same with the run's overlap
// fingerprint passed in (ofp) as computed inside.
func TestSavedCopiesCurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// the finished template's runs (overlap and step aggregates saved
	// there, once per binary) finished: the fuse patterns and overlap rows
	w := finishedThreeDemoRuns(t)
	if err := Finish(ctx, w.DB, catalog.Default(), 5000); err != nil {
		t.Fatal(err)
	}
	// state is, per run (by run_id), which copies are current: overlap,
	// steps, and for its lowest rank fuse patterns and overlap rows (with
	// the floor saved, then with another).
	state := func() map[int64]string {
		t.Helper()
		rows, err := w.DB.QueryContext(ctx, `
			SELECT x.run_id, o, s, f, r, r2, o = o2 AND s = s2 AND f = f2 AND r = r3
			FROM (SELECT run_id, min(rank) AS rank FROM traces GROUP BY run_id) x,
			     LATERAL (SELECT _overlap_fingerprint(x.run_id)::VARCHAR AS fp) p,
			     LATERAL (SELECT _overlap_current(x.run_id) AS o, _steps_current(x.run_id) AS s,
			                     _fusion_current(x.run_id, x.rank) AS f,
			                     _overlap_rows_current(x.run_id, x.rank, 5000) AS r,
			                     _overlap_rows_current(x.run_id, x.rank, 4000) AS r2,
			                     _overlap_current(x.run_id, ofp := p.fp) AS o2, _steps_current(x.run_id, ofp := p.fp) AS s2,
			                     _fusion_current(x.run_id, x.rank, ofp := p.fp) AS f2,
			                     _overlap_rows_current(x.run_id, x.rank, 5000, ofp := p.fp) AS r3) c
			ORDER BY x.run_id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]string{}
		for rows.Next() {
			var run int64
			var o, s, f, r, r2, same bool
			if err := rows.Scan(&run, &o, &s, &f, &r, &r2, &same); err != nil {
				t.Fatal(err)
			}
			if !same {
				t.Errorf("run %d: the answers differ with the overlap fingerprint passed in", run)
			}
			out[run] = fmt.Sprintf("overlap=%v steps=%v fusion=%v rows=%v rows@4us=%v", o, s, f, r, r2)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	const all = "overlap=true steps=true fusion=true rows=true rows@4us=false"
	check := func(when string, want map[int64]string) {
		t.Helper()
		got := state()
		if len(got) != 3 {
			t.Fatalf("%s: %d runs, want 3", when, len(got))
		}
		for run, g := range got {
			if g != want[run] {
				t.Errorf("%s: run %d: %s, want %s", when, run, g, want[run])
			}
		}
	}
	check("after the finish", map[int64]string{1: all, 2: all, 3: all})
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := w.DB.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	// a step found otherwise: run 1's step aggregates (and idle rows) only
	exec(`UPDATE kernels SET step = coalesce(step, 0) + 1 WHERE kernel_id = (SELECT min(kernel_id) FROM kernels WHERE run_id = 1)`)
	check("after a step changed", map[int64]string{
		1: "overlap=true steps=false fusion=true rows=true rows@4us=false", 2: all, 3: all})
	// another catalog: every run's fuse patterns only
	exec(`UPDATE fusion_catalog SET catalog_hash = catalog_hash || 'x'`)
	check("after another catalog", map[int64]string{
		1: "overlap=true steps=false fusion=false rows=true rows@4us=false",
		2: "overlap=true steps=true fusion=false rows=true rows@4us=false",
		3: "overlap=true steps=true fusion=false rows=true rows@4us=false"})
	// a name only run 3 uses changes category: every copy of run 3
	exec(`UPDATE kernel_names SET category = category || 'x' WHERE name_id = (
		SELECT min(name_id) FROM kernels WHERE run_id = 3 AND name_id NOT IN (SELECT name_id FROM kernels WHERE run_id <> 3))`)
	check("after a reclassification", map[int64]string{
		1: "overlap=true steps=false fusion=false rows=true rows@4us=false",
		2: "overlap=true steps=true fusion=false rows=true rows@4us=false",
		3: "overlap=false steps=false fusion=false rows=false rows@4us=false"})
}
