package queries

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/migrations"
	"github.com/tracehouse/tracehouse/schema"
)

// storeFixture fills f with two runs of random kernels drawn with seed
// (run 1 traces 1-2, run 2 traces 3-4): run 1 is the one tests save.
func storeFixture(f fixture, seed uint64) {
	f.run(1, "stored")
	f.run(2, "not stored")
	for tr := 1; tr <= 4; tr++ {
		f.trace(tr, 1+(tr-1)/2, (tr-1)%2, "decode", "formal")
	}
	for id := 1; id <= 6; id++ {
		c := randomCategories[id]
		f.name(id, "", fmt.Sprintf("k%d", id), "", c[0], c[1])
	}
	rng := newRand(seed)
	f.kernels(append(randomKernels(rng, 150, 1, 1, 1<<32), randomKernels(rng, 80, 2, 3, 3<<32)...)...)
}

func TestDeviceBusyStore(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	db := f.db
	storeFixture(f, 7)
	ctx := context.Background()
	computed := dumpBusy(t, db, "device_busy_for(1)")
	stageBefore, err := StageBusy(ctx, db, StageBusyParams{Run: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := aggregates.SaveOverlap(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	// SaveOverlap saves what device_busy_for computes, and only for run 1.
	if got := dumpBusy(t, db, "(SELECT * FROM device_busy_store)"); got != computed {
		t.Fatalf("saved busy rows:\n%s\nwant\n%s", got, computed)
	}
	if got := dumpBusy(t, db, "device_busy_cached(1)"); got != computed {
		t.Errorf("device_busy_cached once saved:\n%s\nwant\n%s", got, computed)
	}
	fp, err := OverlapFingerprint(ctx, db, 1)
	if err != nil {
		t.Fatal(err)
	}
	var want string
	if err := db.QueryRow(`SELECT _overlap_fingerprint(1)::VARCHAR`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if !fp.Valid || fp.String != want {
		t.Fatalf("OverlapFingerprint = %v, want %s", fp, want)
	}
	for _, ofp := range []sql.NullString{{}, fp} {
		stage, err := StageBusy(ctx, db, StageBusyParams{Run: 1, OverlapFP: ofp})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(stage) != fmt.Sprint(stageBefore) {
			t.Errorf("stage_busy (overlap_fp %v) changed once saved:\n%v\nwant\n%v", ofp, stage, stageBefore)
		}
		// OverlapFresh says so, and the saved rows read through the
		// twin (Saved) are the same rows.
		if fresh, err := OverlapFresh(ctx, db, 1, ofp); err != nil || !fresh {
			t.Errorf("OverlapFresh(run 1, overlap_fp %v) = %v, %v once saved, want true", ofp, fresh, err)
		}
		saved, err := StageBusy(ctx, db, StageBusyParams{Run: 1, OverlapFP: ofp, Saved: true})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(saved) != fmt.Sprint(stageBefore) {
			t.Errorf("stage_busy read through _device_busy_store_rows (overlap_fp %v):\n%v\nwant\n%v", ofp, saved, stageBefore)
		}
	}
	if fresh, err := OverlapFresh(ctx, db, 2, sql.NullString{}); err != nil || fresh {
		t.Errorf("OverlapFresh(run 2, never saved) = %v, %v, want false", fresh, err)
	}

	// The saved rows are what is read, with the fingerprint computed or
	// given; a fingerprint that is not the run's reads the kernels.
	f.exec(`UPDATE device_busy_store SET streams = -7 WHERE trace_id = 1`)
	marked := func(from string) bool {
		t.Helper()
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM ` + from + ` WHERE streams = -7`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	if !marked("device_busy_cached(1)") || !marked("device_busy_cached(1, ofp := '"+fp.String+"')") {
		t.Fatalf("device_busy_cached did not read device_busy_store")
	}
	if !marked("overlap_device_busy(1)") {
		t.Errorf("overlap_device_busy did not read device_busy_store")
	}
	other := strconv.FormatUint(mustUint(t, fp.String)+1, 10)
	if marked("device_busy_cached(1, ofp := '" + other + "')") {
		t.Errorf("device_busy_cached read the store under another fingerprint")
	}
	stage, err := StageBusy(ctx, db, StageBusyParams{Run: 1, OverlapFP: fp})
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprint(stage); !strings.Contains(s, "-7") {
		t.Errorf("stage_busy with the fingerprint given did not read the store: %v", s)
	}
	// Run 2 was never saved: computed.
	if got, want := dumpBusy(t, db, "device_busy_cached(2)"), dumpBusy(t, db, "device_busy_for(2)"); got != want {
		t.Errorf("run 2 (not saved):\n%s\nwant\n%s", got, want)
	}

	// A changed kernel makes the copy stale: computed, the mark gone.
	f.exec(`UPDATE kernels SET dur_ns = dur_ns + 3 WHERE kernel_id = (SELECT max(kernel_id) FROM kernels WHERE run_id = 1)`)
	if got, want := dumpBusy(t, db, "device_busy_cached(1)"), dumpBusy(t, db, "device_busy_for(1)"); got != want || marked("device_busy_cached(1)") {
		t.Errorf("stale busy rows read after a kernel change")
	}
	fp2, err := OverlapFingerprint(ctx, db, 1)
	if err != nil {
		t.Fatal(err)
	}
	if fp2 == fp {
		t.Fatalf("the fingerprint did not change with a kernel")
	}
	if fresh, err := OverlapFresh(ctx, db, 1, fp2); err != nil || fresh {
		t.Errorf("OverlapFresh after a kernel change = %v, %v, want false", fresh, err)
	}
	if marked("device_busy_cached(1, ofp := '" + fp2.String + "')") {
		t.Errorf("stale busy rows read with the new fingerprint given")
	}
	// A reclassification too.
	if err := aggregates.SaveOverlap(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	f.exec(`UPDATE device_busy_store SET streams = -7 WHERE trace_id = 1`)
	f.exec(`UPDATE kernel_names SET category = 'compute' WHERE name_id = 5`)
	if marked("device_busy_cached(1)") {
		t.Errorf("stale busy rows read after a category change")
	}
	// Saving again replaces the rows: one copy.
	for range 2 {
		if err := aggregates.SaveOverlap(ctx, db, 1); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := dumpBusy(t, db, "(SELECT * FROM device_busy_store)"), dumpBusy(t, db, "device_busy_for(1)"); got != want {
		t.Errorf("saved twice:\n%s\nwant\n%s", got, want)
	}
}

func mustUint(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFreshChecksTakeTheFingerprint: overlap_fresh.sql,
// overlap_rows_fresh.sql and fusion_fresh.sql say the same given the run's
// fingerprint as computing it, and stale given another; the same through
// isFreshGiven, which names the checks' *_current_given forms then.
func TestFreshChecksTakeTheFingerprint(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	db := f.db
	storeFixture(f, 7)
	ctx := context.Background()
	if err := aggregates.SaveOverlap(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	if err := aggregates.SaveOverlapRows(ctx, db, []int64{1}, DefaultMinDurNS); err != nil {
		t.Fatal(err)
	}
	f.exec(`INSERT INTO fusion_store_runs SELECT 1, 0, _fusion_fingerprint(1), now()::TIMESTAMP`)
	fp, err := OverlapFingerprint(ctx, db, 1)
	if err != nil {
		t.Fatal(err)
	}
	other := sql.NullString{String: strconv.FormatUint(mustUint(t, fp.String)+1, 10), Valid: true}
	checks := map[string]string{"overlap_fresh": "_overlap_current", "overlap_rows_fresh": "_overlap_rows_current",
		"fusion_fresh": "_fusion_current"}
	fresh := func(name string, ofp sql.NullString) bool {
		t.Helper()
		text, err := Text(name)
		if err != nil {
			t.Fatal(err)
		}
		args := []any{sql.Named("run", 1)}
		switch name {
		case "overlap_rows_fresh":
			args = append(args, sql.Named("rank", 0), sql.Named("min_dur_ns", DefaultMinDurNS))
		case "fusion_fresh":
			args = append(args, sql.Named("rank", 0))
		}
		var b bool
		if err := db.QueryRow(text, append(args, sql.Named("overlap_fp", ofp))...).Scan(&b); err != nil {
			t.Fatal(err)
		}
		given, err := isFreshGiven(ctx, db, name, checks[name], ofp, args)
		if err != nil {
			t.Fatal(err)
		}
		if given != b {
			t.Errorf("%s with overlap_fp %v: %v through isFreshGiven, %v as written", name, ofp, given, b)
		}
		return b
	}
	for name := range checks {
		if !fresh(name, sql.NullString{}) || !fresh(name, fp) {
			t.Errorf("%s: not fresh with the fingerprint computed or given", name)
		}
		if fresh(name, other) {
			t.Errorf("%s: fresh under another fingerprint", name)
		}
	}
	// The saved overlap rows are read with the fingerprint given, and the
	// same as computed.
	p := OverlapByKernelParams{Run: 1, Rank: rankOf(0), OverlapFP: fp}
	saved, ok, err := OverlapByKernelCached(ctx, db, p)
	if err != nil || !ok {
		t.Fatalf("OverlapByKernelCached: saved %v, %v", ok, err)
	}
	p.OverlapFP = other
	live, ok, err := OverlapByKernelCached(ctx, db, p)
	if err != nil || ok {
		t.Fatalf("OverlapByKernelCached under another fingerprint: saved %v, %v", ok, err)
	}
	if fmt.Sprint(saved) != fmt.Sprint(live) {
		t.Errorf("saved overlap rows differ from computed ones")
	}
}

// migrationData runs the data changes (INSERT, UPDATE, DELETE) of the
// embedded migration numbered n on db, as they ran when a warehouse of
// before it migrated: a warehouse can no longer be left at an old version
// with that version's macros (they are the SQL library's now, which needs
// every migration's tables), so tests of what a migration did to older
// warehouses' rows run its data changes on a current one.
func migrationData(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	ms, err := schema.LoadMigrations(migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, st := range schema.SplitStatements(ms[n-1].SQL) {
		// without the comment above the statement
		lines := strings.Split(st.SQL, "\n")
		for len(lines) > 0 && (strings.TrimSpace(lines[0]) == "" || strings.HasPrefix(strings.TrimSpace(lines[0]), "--")) {
			lines = lines[1:]
		}
		code := strings.Join(lines, "\n")
		for _, verb := range []string{"INSERT ", "UPDATE ", "DELETE "} {
			if strings.HasPrefix(code, verb) {
				if _, err := db.Exec(code); err != nil {
					t.Fatalf("migration %d line %d: %v", n, st.Line, err)
				}
				ran++
			}
		}
	}
	if ran == 0 {
		t.Fatalf("migration %d changes no rows", n)
	}
}

// TestDeviceBusyBackfill: migration 0013 fills device_busy_store for runs
// whose overlap was saved before it, and they are read from there; 0014
// then forgets every saved copy's record (its fingerprint changed), so
// the same warehouse computes them live until the run is saved again.
func TestDeviceBusyBackfill(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	storeFixture(f, 7)
	// what SaveOverlap did before 0013: the per-kernel rows and their
	// record, no busy rows
	f.exec(`INSERT INTO kernel_overlap_store SELECT * FROM kernel_overlap_for(1)`)
	f.exec(`INSERT INTO kernel_overlap_runs VALUES (1, _overlap_fingerprint(1), now()::TIMESTAMP)`)
	migrationData(t, f.db, 13)
	if got, want := dumpBusy(t, f.db, "(SELECT * FROM device_busy_store)"), dumpBusy(t, f.db, "device_busy_for(1)"); got != want {
		t.Fatalf("backfilled busy rows:\n%s\nwant\n%s", got, want)
	}
	f.exec(`UPDATE device_busy_store SET streams = -7`)
	var n int
	if err := f.db.QueryRow(`SELECT count(*) FROM device_busy_cached(1) WHERE streams = -7`).Scan(&n); err != nil || n == 0 {
		t.Errorf("backfilled rows not read (%d, %v)", n, err)
	}

	// 0014: the copy is no longer taken for current.
	migrationData(t, f.db, 14)
	if err := f.db.QueryRow(`SELECT count(*) FROM kernel_overlap_runs`).Scan(&n); err != nil || n != 0 {
		t.Errorf("saved-overlap records after 0014: %d, %v; want none", n, err)
	}
	if got, want := dumpBusy(t, f.db, "device_busy_cached(1)"), dumpBusy(t, f.db, "device_busy_for(1)"); got != want || strings.Contains(got, "-7") {
		t.Errorf("busy rows after 0014:\n%s\nwant the computed\n%s", got, want)
	}
}
