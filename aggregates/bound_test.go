package aggregates

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestFinishBounded: a finish on a warehouse file runs under DuckDB's
// finish bound and puts the caller's limit back; a save that runs out of
// memory under the bound (3 MiB here) is made again without it, which its
// notice says once, and the saved copies equal those of a finish that was
// never bounded. A finish of runs this small (under
// SmallRunEvents) sets no bound and leaves the caller's limit.
func TestFinishBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// ingested is a copy of a warehouse holding the demo's sglang-llama run,
	// ingested and not finished, whose caller set DuckDB's memory limit to
	// 3 GiB (schematest.LimitedFrom), and a reader of the limit in force:
	// the start each of the four finishes below had from an ingest of its
	// own into schematest.Limited's warehouse (the ingest's own bound and
	// its restore are ingest's tests').
	ingested := func() (*schema.Warehouse, func() string) {
		t.Helper()
		return schematest.LimitedFrom(t, demoTemplate(t, "sglang-llama"))
	}
	dump := func(w *schema.Warehouse) string {
		t.Helper()
		return schematest.Dump(t, w.DB, `SELECT * FROM kernel_overlap_store ORDER BY ALL`) +
			schematest.Dump(t, w.DB, `SELECT * FROM step_kernel_store ORDER BY ALL`) +
			schematest.Dump(t, w.DB, `SELECT * FROM step_total_store ORDER BY ALL`)
	}
	// finish saves what is due, asked before (as a finish asks under the
	// bound it sets, but here one of 3 MiB would not fit the question)
	finish := func(ctx context.Context, w *schema.Warehouse, due finishPlan) {
		t.Helper()
		if err := saveOverlapOf(ctx, w.DB, &due); err != nil {
			t.Fatal(err)
		}
		if err := saveStepsOf(ctx, w.DB, &due); err != nil {
			t.Fatal(err)
		}
	}
	pending := func(w *schema.Warehouse) finishPlan {
		t.Helper()
		p, err := finishPending(ctx, w.DB)
		if err != nil || len(p.overlap) == 0 || len(p.steps) == 0 {
			t.Fatalf("nothing due after an ingest: %+v %v", p, err)
		}
		return p
	}
	plain, _ := ingested()
	finish(ctx, plain, pending(plain)) // no bound in its context
	want := dump(plain)
	if !strings.Contains(want, "\n") || len(strings.Split(want, "\n")) < 100 {
		t.Fatalf("the unbounded finish saved almost nothing:\n%s", want)
	}

	w, limit := ingested()
	before := limit()
	due := pending(w)
	bound, held, err := ingest.BoundFinish(ctx, w.DB, 3)
	if err != nil || held || bound == nil {
		t.Fatalf("bound the finish: held %v, %v", held, err)
	}
	if got := limit(); got != "3.0 MiB" {
		t.Fatalf("bounded finish: memory_limit %q, want 3.0 MiB", got)
	}
	var notes []string
	due.bound = bound
	finish(WithNotice(ctx, func(msg string) { notes = append(notes, msg) }), w, due)
	if len(notes) != 1 || !strings.Contains(notes[0], "saving the overlap of run(s) sglang-llama ran out of the finish's memory bound") ||
		!strings.Contains(notes[0], "Out of Memory") {
		t.Errorf("notices of the lifted bound: %q, want one naming the overlap of sglang-llama and DuckDB's error", notes)
	}
	if got := limit(); got != before {
		t.Fatalf("after a finish that ran out of 3 MiB: memory_limit %q, want the caller's %q (the bound lifted)", got, before)
	}
	if err := bound.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if got := dump(w); got != want {
		t.Fatalf("copies saved under the bound differ from the unbounded ones:\n%s\nwant:\n%s", got, want)
	}

	// FinishPerRun of a run this small leaves the limit alone.
	v, limit := ingested()
	before = limit()
	notes = nil
	if err := FinishPerRun(WithNotice(ctx, func(msg string) { notes = append(notes, msg) }), v.DB, catalog.Default()); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 {
		t.Errorf("FinishPerRun: notices %q, want none", notes)
	}
	if got := limit(); got != before {
		t.Fatalf("memory_limit after FinishPerRun %q, want %q", got, before)
	}
	if got := dump(v); got != want {
		t.Fatalf("copies saved by FinishPerRun differ from the unbounded ones:\n%s\nwant:\n%s", got, want)
	}

	// Above the threshold (0 GPU events here) the finish's saves run
	// under DuckDBFinishMiB, and restore puts the caller's limit back.
	u, limit := ingested()
	before = limit()
	due, restore, err := finishSettingsAbove(ctx, u.DB, 0, DuckDBFinishMiB)
	if err != nil {
		t.Fatal(err)
	}
	if len(due.overlap) == 0 {
		t.Fatalf("nothing due after an ingest: %+v", due)
	}
	if got, want := limit(), fmt.Sprintf("%d.0 MiB", DuckDBFinishMiB); got != want {
		t.Errorf("finish above its threshold: memory_limit %q, want %q", got, want)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if got := limit(); got != before {
		t.Fatalf("memory_limit after the finish's restore %q, want %q", got, before)
	}
	// A bound DuckDB already holds more than (0 MiB, HoldMemory) is not
	// set, and the finish says so. DuckDB's refusal leaves its limit at
	// the bound all the same: the caller's is put back.
	release := schematest.HoldMemory(t, u.DB)
	notes = nil
	_, restore, err = finishSettingsAbove(WithNotice(ctx, func(msg string) { notes = append(notes, msg) }), u.DB, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if got := limit(); got != before {
		t.Errorf("a bound DuckDB is over: memory_limit %q, want the caller's %q", got, before)
	}
	if want := "the aggregates are saved without the finish's 0 MiB memory bound: DuckDB already held more and could not free it, so the finish may take more memory"; len(notes) != 1 || notes[0] != want {
		t.Errorf("notices of a bound not set: %q, want %q", notes, want)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	// and at the real threshold this run's finish sets none
	_, restore, err = finishSettings(ctx, u.DB)
	if err != nil {
		t.Fatal(err)
	}
	if got := limit(); got != before {
		t.Errorf("finish of %d GPU events: memory_limit %q, want the caller's %q", due.kernels(), got, before)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
}
