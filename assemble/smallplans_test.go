package assemble

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// disabledOptimizers reads DuckDB's disabled_optimizers setting through
// q (a setting of the whole database: any connection of w.DB shows it).
func disabledOptimizers(t *testing.T, ctx context.Context, q queries.Querier) string {
	t.Helper()
	rows, err := q.QueryContext(ctx, `SELECT current_setting('disabled_optimizers')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var v string
	if !rows.Next() || rows.Scan(&v) != nil {
		t.Fatalf("read disabled_optimizers: %v", rows.Err())
	}
	return v
}

// TestTriageSmallPlans: Triage computes the report of a run of at most
// aggregates.SmallRunEvents GPU events with the large-input optimizers off
// (target.SmallPlans) and puts the caller's setting back after, when the
// computation fails too; with the bound under the run's events it computes
// with the caller's. Compare and History, which turn them off for small
// runs too, put the caller's setting back after a failure.
func TestTriageSmallPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tmp := t.TempDir()
	dir, dir2 := filepath.Join(tmp, "hand"), filepath.Join(tmp, "hand2")
	handTrace(t, dir, 0, 2)
	handTrace(t, dir2, 0, 3) // a second run, for Compare
	// ingested, not finished: the reports asked for are computed (every
	// rank), so nothing a finish saves is read
	w := schematest.Open(t, "")
	if _, err := ingest.Ingest(ctx, w, []string{dir, dir2}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	runs := storedRuns(t, w)
	run := runs[0]
	setting := func(q queries.Querier) string { return disabledOptimizers(t, ctx, q) }
	const caller = "filter_pullup"
	if _, err := w.DB.ExecContext(ctx, `SET disabled_optimizers = '`+caller+`'`); err != nil {
		t.Fatal(err)
	}
	var during string
	o := defaultTriage
	o.RankAll = true // computed, not the saved report
	o.compute = func(ctx context.Context, q queries.Querier, p queries.TriageParams) (*queries.TriageData, error) {
		during = setting(q)
		return queries.Triage(ctx, q, p)
	}
	for _, bound := range []int64{aggregates.SmallRunEvents, -1} {
		o.planBound, during = bound, ""
		if _, err := Triage(ctx, w, run, nil, o); err != nil {
			t.Fatal(err)
		}
		small := bound > 0
		if off := strings.Contains(during, "join_filter_pushdown") && strings.Contains(during, caller); small && !off || !small && during != caller {
			t.Errorf("bound %d: computed with disabled optimizers %q (the caller's %q)", bound, during, caller)
		}
		if got := setting(w.DB); got != caller {
			t.Errorf("bound %d: after Triage disabled optimizers %q, want the caller's %q", bound, got, caller)
		}
	}
	// A computation that fails (here: cancelled, as by ^C) puts the
	// caller's setting back too.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	o.planBound = aggregates.SmallRunEvents
	o.compute = func(ctx context.Context, _ queries.Querier, _ queries.TriageParams) (*queries.TriageData, error) {
		cancel()
		return nil, ctx.Err()
	}
	if _, err := Triage(cctx, w, run, nil, o); !errors.Is(err, context.Canceled) {
		t.Errorf("computation cancelled: Triage's error %v, want %v", err, context.Canceled)
	}
	if got := setting(w.DB); got != caller {
		t.Errorf("computation cancelled: after Triage disabled optimizers %q, want the caller's %q", got, caller)
	}

	// Compare and History of the two small runs put the caller's setting
	// back when they fail after turning the optimizers off: a rank asked
	// for that neither run has (compare --rank, refused reading a side), a
	// kernel pattern DuckDB refuses (history's steps query). (Their restore
	// is the one call on both paths; a comparison that succeeds costs 0.17
	// s here, a history 0.06 s.)
	co := CompareOptions{Gates: DefaultGates(), Rank: 5, RankSet: true}
	if _, err := Compare(ctx, w, runs[0], runs[1], "0", "1", co); err == nil || !strings.Contains(err.Error(), "see --rank") {
		t.Errorf("Compare --rank 5: error %v, want a rank no run has", err)
	}
	if got := setting(w.DB); got != caller {
		t.Errorf("after a failed Compare disabled optimizers %q, want the caller's %q", got, caller)
	}
	if _, err := History(ctx, w, HistoryOptions{Kernel: "kernel_(a"}); err == nil || !strings.Contains(err.Error(), "history_steps") {
		t.Errorf("History of kernel_(a: error %v, want the steps query's", err)
	}
	if got := setting(w.DB); got != caller {
		t.Errorf("after a failed History disabled optimizers %q, want the caller's %q", got, caller)
	}
}
