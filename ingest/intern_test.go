package ingest

import (
	"context"
	"database/sql"
	"testing"

	"github.com/tracehouse/tracehouse/schema"
)

// TestNamesCommitWithTheirTrace: an ingest's sole loader stores a trace's
// new names inside the trace's transaction (interner.flushInto), so they
// are seen, classified, by that transaction alone; rolled back, they go
// with it and the next flush stores them under the ids they were given;
// committed, they stay and are not stored again.
func TestNamesCommitWithTheirTrace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	in, err := loadInterner(ctx, w.DB)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := w.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	l := &loader{db: w.DB, names: in, sole: true}
	count := func(q querier, query string, args ...any) int {
		t.Helper()
		var n int
		if err := q.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const gemm = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>(Params)"
	id := in.kernel([]byte(gemm))
	site := in.site([]byte("model.py(12): forward"))
	tx, err := beginTrace(ctx, conn, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.storeNames(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if n := count(conn, `SELECT count(*) FROM kernel_names WHERE name_id = ? AND family = 'gemm'`, id); n != 1 {
		t.Errorf("inside the trace's transaction: %d classified rows of the new name, want 1", n)
	}
	if n := count(w.DB, `SELECT count(*) FROM kernel_names WHERE name_id = ?`, id); n != 0 {
		t.Errorf("outside the trace's transaction: %d rows of the new name, want 0 (not committed yet)", n)
	}
	var rerr error
	tx.rollback(ctx, &rerr)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if n := count(w.DB, `SELECT count(*) FROM kernel_names WHERE name_id = ?`, id); n != 0 {
		t.Errorf("rolled back: %d rows of the new name, want 0", n)
	}
	// the next trace's flush stores them under the ids the events carry
	tx, err = beginTrace(ctx, conn, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.storeNames(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.commit(ctx, "t.trace.json", 1); err != nil {
		t.Fatal(err)
	}
	if n := count(w.DB, `SELECT count(*) FROM kernel_names WHERE name_id = ? AND name = ? AND family = 'gemm'`, id, gemm); n != 1 {
		t.Errorf("after the next trace's commit: %d rows of the name under id %d, want 1", n, id)
	}
	if n := count(w.DB, `SELECT count(*) FROM sites WHERE site_id = ? AND name = 'model.py(12): forward'`, site.id); n != 1 {
		t.Errorf("after the next trace's commit: %d rows of the site under id %d, want 1", n, site.id)
	}
	if len(in.newKernels)+len(in.newSites) != 0 {
		t.Errorf("still pending after the commit: %v %v", in.newKernels, in.newSites)
	}
}

// querier is a *sql.DB or *sql.Conn, for a count.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}
