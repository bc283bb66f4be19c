package queries

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// launchStores are the copies of launch overhead and spread saved with the
// step aggregates, each beside the macro that defines its rows.
var launchStores = []struct{ table, def string }{
	{"launch_kernel_store", "_launch_kernels_for"},
	{"launch_stage_store", "_launch_stages_for"},
	{"kernel_spread_store", "_kernel_spread_for"},
}

// savedDiffers counts the rows by which each saved launch or spread copy
// and its definition (every rank apart) differ over the runs in runs (a
// SQL list).
func savedDiffers(t *testing.T, db *sql.DB, runs string) {
	t.Helper()
	for _, s := range launchStores {
		def := fmt.Sprintf(`SELECT * FROM %s(NULL, by_rank := true, runs := %s)`, s.def, runs)
		var n, differ int
		if err := db.QueryRow(`SELECT (SELECT count(*) FROM `+s.table+`), count(*) FROM (
				(SELECT * FROM `+s.table+` EXCEPT ALL `+def+`) UNION ALL (`+def+` EXCEPT ALL SELECT * FROM `+s.table+`))`).Scan(&n, &differ); err != nil ||
			differ != 0 || n == 0 {
			t.Errorf("%s: %d rows, %d differ from %s (%v)", s.table, n, differ, s.def, err)
		}
	}
}

// launchRead is what triage shows of launch overhead and spread.
type launchRead struct {
	kernels []LaunchByKernelRow
	stages  []LaunchByStageRow
	spread  []KernelSpreadRow
}

// readLaunch reads them through the *_cached macros and, when
// launch_saved.sql says the saved rows answer, through the *_saved twins
// as triage does: both must give the same rows.
func readLaunch(t *testing.T, db *sql.DB, p LaunchParams) launchRead {
	t.Helper()
	r := readLaunchAs(t, db, p)
	saved, err := LaunchSaved(context.Background(), db, p)
	if err != nil {
		t.Fatal(err)
	}
	if saved {
		p.Saved = true
		if twin := readLaunchAs(t, db, p); !twin.equal(r) {
			t.Errorf("%+v: the saved twins read %+v, the cached macros %+v", p, twin, r)
		}
	}
	return r
}

func readLaunchAs(t *testing.T, db *sql.DB, p LaunchParams) launchRead {
	t.Helper()
	ctx := context.Background()
	var r launchRead
	var err error
	if r.kernels, err = LaunchByKernel(ctx, db, p); err != nil {
		t.Fatal(err)
	}
	if r.stages, err = LaunchByStage(ctx, db, p); err != nil {
		t.Fatal(err)
	}
	if r.spread, err = KernelSpread(ctx, db, p); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r launchRead) equal(o launchRead) bool {
	return slices.Equal(r.kernels, o.kernels) && slices.Equal(r.stages, o.stages) && slices.Equal(r.spread, o.spread)
}

// TestLaunchSpreadSaved: launchDB's run saved as ingest saves it (with the
// step aggregates) holds each rank's rows as the definitions compute them;
// a triage of one rank reads them while current (checked, or said fresh)
// and computes them when told they are not or once a kernel changed; of
// every rank, it reads them only when the run has one rank (medians do not
// add up across ranks).
func TestLaunchSpreadSaved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := launchDB(t)
	computed := map[sql.NullInt64]launchRead{}
	for _, rank := range []sql.NullInt64{rankOf(0), rankOf(1), {}} {
		computed[rank] = readLaunch(t, f.db, LaunchParams{Run: 1, Rank: rank})
	}
	save := func() {
		t.Helper()
		if err := aggregates.SaveOverlap(ctx, f.db, 1); err != nil {
			t.Fatal(err)
		}
		if err := aggregates.SaveSteps(ctx, f.db, 1); err != nil {
			t.Fatal(err)
		}
	}
	save()
	savedDiffers(t, f.db, "[1]")
	// rank 0's kernel_a, known from TestLaunchByKernelAndStage
	if got := schematest.Dump(t, f.db, `SELECT rank, short_name, events, launched, delay_max_ns, launch_bound, short
			FROM launch_kernel_store ORDER BY ALL`); got != "0 kernel_a 3 3 6000 1 2\n0 kernel_b 2 0 <nil> 0 2\n1 kernel_a 1 1 90 0 1\n" {
		t.Errorf("saved launch rows:\n%s", got)
	}
	checked, isFresh, notFresh := sql.NullBool{}, sql.NullBool{Bool: true, Valid: true}, sql.NullBool{Valid: true}
	// The saved rows answer for one rank of a current copy, not for every
	// rank of two, nor for a copy said stale.
	for _, c := range []struct {
		rank  sql.NullInt64
		fresh sql.NullBool
		want  bool
	}{{rankOf(0), checked, true}, {rankOf(1), isFresh, true}, {rankOf(0), notFresh, false}, {sql.NullInt64{}, isFresh, false}} {
		if got, err := LaunchSaved(ctx, f.db, LaunchParams{Run: 1, Rank: c.rank, Fresh: c.fresh}); err != nil || got != c.want {
			t.Errorf("launch_saved, rank %v fresh %v: %v %v, want %v", c.rank, c.fresh, got, err, c.want)
		}
	}
	// (Read with notFresh here the copy could not show: it still equals
	// what is computed. The changed copy below is read with notFresh.)
	for rank, want := range computed {
		for _, fresh := range []sql.NullBool{checked, isFresh} {
			if got := readLaunch(t, f.db, LaunchParams{Run: 1, Rank: rank, Fresh: fresh}); !got.equal(want) {
				t.Errorf("rank %v fresh %v: %+v, want %+v", rank, fresh, got, want)
			}
		}
	}
	// The copy is what is read: a changed saved row shows while current,
	// for one rank only.
	for _, s := range launchStores {
		f.exec(`UPDATE ` + s.table + ` SET events = events + 100 WHERE rank = 0`)
	}
	for _, c := range []struct {
		rank  sql.NullInt64
		fresh sql.NullBool
		plus  int64
	}{{rankOf(0), checked, 100}, {rankOf(0), isFresh, 100}, {rankOf(0), notFresh, 0}, {sql.NullInt64{}, isFresh, 0}} {
		got, want := readLaunch(t, f.db, LaunchParams{Run: 1, Rank: c.rank, Fresh: c.fresh}), computed[c.rank]
		if got.kernels[0].Events != want.kernels[0].Events+c.plus || got.stages[0].Events != want.stages[0].Events+c.plus ||
			got.spread[0].Events != want.spread[0].Events+c.plus {
			t.Errorf("rank %v fresh %v: events %d %d %d, want %d more than computed", c.rank, c.fresh,
				got.kernels[0].Events, got.stages[0].Events, got.spread[0].Events, c.plus)
		}
	}
	// A kernel moved: stale, computed.
	f.exec(`UPDATE kernels SET dur_ns = dur_ns + 1 WHERE kernel_id = 1`)
	computed[rankOf(0)] = readLaunch(t, f.db, LaunchParams{Run: 1, Rank: rankOf(0), Fresh: notFresh})
	if got := readLaunch(t, f.db, LaunchParams{Run: 1, Rank: rankOf(0)}); !got.equal(computed[rankOf(0)]) {
		t.Errorf("stale copy read: %+v", got)
	}
	// One rank left: its saved rows answer for every rank too.
	f.exec(`DELETE FROM kernels WHERE rank = 1`)
	every := readLaunch(t, f.db, LaunchParams{Run: 1, Fresh: notFresh})
	save()
	if got := readLaunch(t, f.db, LaunchParams{Run: 1}); !got.equal(every) {
		t.Errorf("one rank, every rank: %+v, want %+v", got, every)
	}
	f.exec(`UPDATE launch_stage_store SET events = events + 100`)
	if got := readLaunch(t, f.db, LaunchParams{Run: 1}); got.stages[0].Events != every.stages[0].Events+100 {
		t.Errorf("one rank, every rank: the saved rows are not read: %+v", got.stages)
	}
}

// TestLaunchSpreadSavedDemo: on the demo (saved by FinishPerRun), the saved
// launch and spread rows are those the definitions compute.
func TestLaunchSpreadSavedDemo(t *testing.T) {
	t.Parallel()
	db := schematest.Open(t, finishedDemoTemplate(t)).DB
	savedDiffers(t, db, `(SELECT list(run_id) FROM runs)`)
}
