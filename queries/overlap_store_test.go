package queries

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// dumpOverlap lists every column of a kernel_overlap_* call (or any
// relation with a kernel_id), one line per kernel, ordered by kernel_id.
func dumpOverlap(t *testing.T, db *sql.DB, from string) string {
	t.Helper()
	return schematest.Dump(t, db, `SELECT * FROM `+from+` ORDER BY kernel_id`)
}

func TestKernelOverlapStore(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	db := f.db
	storeFixture(f, 5)
	ctx := context.Background()

	computed := dumpOverlap(t, db, "kernel_overlap_for(1)")
	before, err := OverlapByKernel(ctx, db, OverlapByKernelParams{Run: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := aggregates.SaveOverlap(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	if got := dumpOverlap(t, db, "kernel_overlap_cached(1)"); got != computed {
		t.Fatalf("stored rows differ from computed ones:\n%s\nvs\n%s", got, computed)
	}
	after, err := OverlapByKernel(ctx, db, OverlapByKernelParams{Run: 1})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("overlap table changed once stored")
	}
	// Filters apply to the stored rows too. Start ranks then count the
	// starts of the whole run rather than of the filtered rows: other
	// numbers, same meaning (consecutive within a group), so pairs and the
	// table agree.
	noRanks := "(SELECT * EXCLUDE (start_rank, starts_before_end) FROM %s)"
	if got, want := dumpOverlap(t, db, fmt.Sprintf(noRanks, "kernel_overlap_cached(1, rank := 1, stage := 'decode')")),
		dumpOverlap(t, db, fmt.Sprintf(noRanks, "kernel_overlap_for(1, rank := 1, stage := 'decode')")); got != want {
		t.Errorf("rank filter on stored rows:\n%s\nwant\n%s", got, want)
	}
	rank1 := sql.NullInt64{Int64: 1, Valid: true}
	f.exec(`DELETE FROM kernel_overlap_runs`)
	computedRank1, err := OverlapByKernel(ctx, db, OverlapByKernelParams{Run: 1, Rank: rank1, MinShare: 0})
	if err != nil {
		t.Fatal(err)
	}
	decode := sql.NullString{String: "decode", Valid: true}
	computedDecode, err := OverlapByKernel(ctx, db, OverlapByKernelParams{Run: 1, Rank: rank1, Stage: decode})
	if err != nil {
		t.Fatal(err)
	}
	if err := aggregates.SaveOverlap(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	storedRank1, err := OverlapByKernel(ctx, db, OverlapByKernelParams{Run: 1, Rank: rank1, MinShare: 0})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(storedRank1) != fmt.Sprint(computedRank1) {
		t.Errorf("rank 1 table differs between stored and computed overlap")
	}
	// A caller that knows the saved copy current reads it without the
	// computation bound (_overlap_rows_saved): the same tables as computed
	// without a saved copy, for the run, a rank, and a rank and stage.
	for _, c := range []struct {
		p    OverlapByKernelParams
		want []OverlapByKernelRow
	}{
		{OverlapByKernelParams{Run: 1}, before},
		{OverlapByKernelParams{Run: 1, Rank: rank1}, computedRank1},
		{OverlapByKernelParams{Run: 1, Rank: rank1, Stage: decode}, computedDecode},
	} {
		c.p.OverlapSaved = sql.NullBool{Bool: true, Valid: true}
		got, err := OverlapByKernel(ctx, db, c.p)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.want) == 0 || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%+v: the table read from the saved overlap differs from the computed one:\n%v\nwant\n%v", c.p, got, c.want)
		}
	}

	// Stage totals from the saved copy equal the computed ones.
	if got, want := dumpBusy(t, db, "device_busy_cached(1)"), dumpBusy(t, db, "device_busy_for(1)"); got != want {
		t.Errorf("busy from the saved copy:\n%s\nwant\n%s", got, want)
	}

	// The saved copy is what is read: a marked row shows through.
	f.exec(`UPDATE kernel_overlap_store SET hidden_by_compute_ns = -7 WHERE kernel_id = (SELECT min(kernel_id) FROM kernel_overlap_store)`)
	var marked int
	if err := db.QueryRow(`SELECT count(*) FROM kernel_overlap_cached(1) WHERE hidden_by_compute_ns = -7`).Scan(&marked); err != nil {
		t.Fatal(err)
	}
	if marked != 1 {
		t.Fatalf("kernel_overlap_cached did not read the store")
	}
	// Run 2 was never stored: computed.
	if got, want := dumpOverlap(t, db, "kernel_overlap_cached(2)"), dumpOverlap(t, db, "kernel_overlap_for(2)"); got != want {
		t.Errorf("run 2 (not stored) differs from its computation")
	}

	// A reclassification makes the copy stale: computed again, mark gone.
	f.exec(`UPDATE kernel_names SET category = 'compute' WHERE name_id = 5`)
	if got, want := dumpOverlap(t, db, "kernel_overlap_cached(1)"), dumpOverlap(t, db, "kernel_overlap_for(1)"); got != want || strings.Contains(got, "-7") {
		t.Errorf("stale copy read after a category change")
	}
	// So does one of a name whose kernels are even in number (their
	// (name, category) pairs used to cancel out in the fingerprint).
	if err := aggregates.SaveOverlap(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	f.exec(`UPDATE kernel_overlap_store SET hidden_by_compute_ns = -7 WHERE kernel_id = (SELECT min(kernel_id) FROM kernel_overlap_store)`)
	var even int64
	if err := db.QueryRow(`SELECT min(name_id) FROM (SELECT name_id FROM kernels WHERE run_id = 1
		GROUP BY name_id HAVING count(*) % 2 = 0)`).Scan(&even); err != nil {
		t.Fatalf("the fixture's run 1 has no name with an even number of kernels: %v", err)
	}
	f.exec(fmt.Sprintf(`UPDATE kernel_names SET category = CASE category WHEN 'compute' THEN 'comm' ELSE 'compute' END
		WHERE name_id = %d`, even))
	if got, want := dumpOverlap(t, db, "kernel_overlap_cached(1)"), dumpOverlap(t, db, "kernel_overlap_for(1)"); got != want || strings.Contains(got, "-7") {
		t.Errorf("stale copy read after a category change of name %d (an even number of kernels)", even)
	}
	// Saved again, then a changed kernel makes it stale again.
	if err := aggregates.SaveOverlap(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	f.exec(`UPDATE kernel_overlap_store SET hidden_by_compute_ns = -7 WHERE kernel_id = (SELECT min(kernel_id) FROM kernel_overlap_store)`)
	f.exec(`UPDATE kernels SET dur_ns = dur_ns + 3 WHERE kernel_id = (SELECT max(kernel_id) FROM kernels WHERE run_id = 1)`)
	if got, want := dumpOverlap(t, db, "kernel_overlap_cached(1)"), dumpOverlap(t, db, "kernel_overlap_for(1)"); got != want || strings.Contains(got, "-7") {
		t.Errorf("stale copy read after a kernel change")
	}
	// Storing twice keeps one copy.
	if err := aggregates.SaveOverlap(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	if err := aggregates.SaveOverlap(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	var n, kernels int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM kernel_overlap_store), (SELECT count(*) FROM kernels WHERE run_id = 1)`).Scan(&n, &kernels); err != nil {
		t.Fatal(err)
	}
	if n != kernels {
		t.Errorf("store holds %d rows for %d kernels", n, kernels)
	}
}

func dumpBusy(t *testing.T, db *sql.DB, from string) string {
	t.Helper()
	return schematest.Dump(t, db, `SELECT * FROM `+from+` ORDER BY trace_id, stage, device`)
}
