package target

import (
	"context"
	"database/sql"
	"reflect"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/schema"
)

// TestFinishSavesFusion: after Finish every rank of every demo run has
// saved fuse-pattern rows equal to what fusion_matches.sql computes, for
// every stage and for one stage with a share floor; a copy goes stale when
// a gate input changes.
func TestFinishSavesFusion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := ingest.Ingest(ctx, w, []string{"../testdata/demo"}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Finish(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatal(err)
	}
	if pending, err := ingest.FusionPending(ctx, w.DB); err != nil || len(pending) != 0 {
		t.Fatalf("after Finish, pending %v %v", pending, err)
	}
	rows, err := w.DB.QueryContext(ctx, `SELECT DISTINCT run_id, rank FROM kernels ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	type rr struct{ run, rank int64 }
	var pairs []rr
	for rows.Next() {
		var p rr
		if err := rows.Scan(&p.run, &p.rank); err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, p)
	}
	rows.Close()
	if len(pairs) < 6 {
		t.Fatalf("only %d (run, rank) pairs in the demo", len(pairs))
	}
	matched := 0
	for _, p := range pairs {
		for _, fp := range []queries.FusionMatchesParams{
			{Run: p.run, Rank: sql.NullInt64{Int64: p.rank, Valid: true}},
			{Run: p.run, Rank: sql.NullInt64{Int64: p.rank, Valid: true}, Stage: sql.NullString{String: "decode", Valid: true}, MinShare: 1},
		} {
			want, err := queries.FusionMatches(ctx, w.DB, fp)
			if err != nil {
				t.Fatal(err)
			}
			got, saved, err := queries.FusionMatchesCached(ctx, w.DB, fp)
			if err != nil {
				t.Fatal(err)
			}
			if !saved || !reflect.DeepEqual(got, want) {
				t.Errorf("run %d rank %d %+v: saved %v\n got %+v\nwant %+v", p.run, p.rank, fp, saved, got, want)
			}
			matched += len(want)
		}
	}
	if matched == 0 {
		t.Fatal("no fuse-pattern row in the demo: the comparison proves nothing")
	}
	// A gate input changes: the copy is not read.
	if _, err := w.DB.ExecContext(ctx, `UPDATE runs SET tp_size = 8 WHERE run_id = ?`, pairs[0].run); err != nil {
		t.Fatal(err)
	}
	fp := queries.FusionMatchesParams{Run: pairs[0].run, Rank: sql.NullInt64{Int64: pairs[0].rank, Valid: true}}
	if _, saved, err := queries.FusionMatchesCached(ctx, w.DB, fp); err != nil || saved {
		t.Errorf("after a TP change: saved %v %v", saved, err)
	}
	// Every rank pooled is never saved.
	fp.Rank = sql.NullInt64{}
	if _, saved, err := queries.FusionMatchesCached(ctx, w.DB, fp); err != nil || saved {
		t.Errorf("every rank: saved %v %v", saved, err)
	}
}
