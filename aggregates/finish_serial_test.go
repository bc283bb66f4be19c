package aggregates

import (
	"context"
	"database/sql"
	"runtime"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestFinishOneAfterAnother: a finish whose runs due are over the limit
// for side-by-side saves (here every run: limit 0) saves them one after
// another, and leaves every copy of every run current, as side by side;
// the copies hold the same rows either way. Each way, while the finish
// saves, DuckDB has no worker thread beside the saves' own on a machine
// of 2 cores or fewer (ingest.CallersOnly) and is as the caller set it on
// a larger one; after it, the caller's settings are back (what
// TestFinishRunsOnCallersOnSmallMachines checked on two more finishes of
// the same runs with the same two limits).
func TestFinishOneAfterAnother(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dumps := map[int64]string{}
	for _, limit := range []int64{0, sideBySideKernels} {
		w := threeDemoRuns(t)
		if _, err := w.DB.ExecContext(ctx, `SET threads = 4`); err != nil {
			t.Fatal(err)
		}
		if _, err := w.DB.ExecContext(ctx, `SET external_threads = 1`); err != nil {
			t.Fatal(err)
		}
		todo, err := finishPending(ctx, w.DB)
		if n := todo.kernelsDue(); err != nil || n == 0 || n > sideBySideKernels {
			t.Fatalf("%d GPU events due (%v): want some, under the side-by-side limit", n, err)
		}
		p := &threadsPhaser{t: t, db: w.DB}
		if err := finish(WithPhaser(ctx, p), w.DB, catalog.Default(), 5000, limit); err != nil {
			t.Fatal(err)
		}
		want := int64(1)
		if runtime.GOMAXPROCS(0) <= 2 {
			want = 4
		}
		if p.threads != 4 || p.external != want {
			t.Errorf("limit %d, while saving (%d cores): threads %d, external %d; want 4 and %d",
				limit, runtime.GOMAXPROCS(0), p.threads, p.external, want)
		}
		if th, ext := schematest.Threads(t, w.DB); th != 4 || ext != 1 {
			t.Errorf("limit %d, after the finish: threads %d, external %d; want 4 and 1", limit, th, ext)
		}
		var current int
		if err := w.DB.QueryRowContext(ctx, `
			SELECT count(*) FROM (SELECT run_id, min(rank) AS rank FROM traces GROUP BY run_id) x
			WHERE _overlap_current(x.run_id) AND _steps_current(x.run_id) AND _fusion_current(x.run_id, x.rank)
			  AND _overlap_rows_current(x.run_id, x.rank, 5000)`).Scan(&current); err != nil {
			t.Fatal(err)
		}
		if current != 3 {
			t.Errorf("limit %d: %d of 3 runs with every copy current", limit, current)
		}
		var d string
		if err := w.DB.QueryRowContext(ctx, `SELECT concat_ws(' ',
			(SELECT count(*) FROM kernel_overlap_store), (SELECT count(*) FROM step_total_store),
			(SELECT count(*) FROM idle_step_store), (SELECT count(*) FROM comm_overlap_store),
			(SELECT count(*) FROM fusion_match_store), (SELECT count(*) FROM overlap_row_store))`).Scan(&d); err != nil {
			t.Fatal(err)
		}
		dumps[limit] = d
	}
	if dumps[0] != dumps[sideBySideKernels] {
		t.Errorf("saved rows one after another %s, side by side %s", dumps[0], dumps[sideBySideKernels])
	}
}

// threadsPhaser records DuckDB's thread settings as the saves begin.
type threadsPhaser struct {
	t                 *testing.T
	db                *sql.DB
	threads, external int64
}

func (p *threadsPhaser) Phase(name string) {
	if name == PhaseSaving {
		p.threads, p.external = schematest.Threads(p.t, p.db)
	}
}
