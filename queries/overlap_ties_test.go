package queries

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// tieTrace is one rank-0 trace whose all-reduce lasts 10 us and starts at
// startUS; with tight, a GEMM follows it on its stream 1 us later (a
// communication kernel next to a compute one: a risky side), else it is
// alone there.
func tieTrace(startUS int, tight bool) string {
	ev := fmt.Sprintf(`{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_bf16_RING_LL","pid":0,"tid":7,"ts":%d,"dur":10,"args":{"device":0,"stream":7}}`, startUS)
	if tight {
		ev += fmt.Sprintf(`,
{"ph":"X","cat":"kernel","name":"ampere_bf16_s16816gemm_128x128","pid":0,"tid":7,"ts":%d,"dur":5,"args":{"device":0,"stream":7}}`, startUS+11)
	}
	return `{"traceEvents": [` + ev + `]}`
}

// TestLongestInstanceTiesByStart: two traces of one run's rank 0 hold an
// all-reduce of the same length; the overlap table's row takes its
// dependency signal from the earlier one (a GEMM right after it: high),
// whichever trace was ingested first. Ties went to the smaller kernel id,
// which follows the order the loaders took the files in (with several
// jobs, whichever loader got there first), so the same traces gave
// another table ingested the other way round.
func TestLongestInstanceTiesByStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	early, late := filepath.Join(dir, "early", "w0-rank0.trace.json"), filepath.Join(dir, "late", "w1-rank0.trace.json")
	for path, text := range map[string]string{early: tieTrace(1000, true), late: tieTrace(5000, false)} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	table := func(first, second string) string {
		t.Helper()
		w := schematest.Open(t, schematest.Migrated(t))
		for i, path := range []string{first, second} {
			res, err := ingest.Ingest(ctx, w, []string{path}, ingest.Options{Jobs: 1, Run: "r", Append: i > 0})
			if err == nil && res.Failed() > 0 {
				err = res.Files[0].Err
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		var run int64
		if err := w.DB.QueryRow(`SELECT run_id FROM runs WHERE label = 'r'`).Scan(&run); err != nil {
			t.Fatal(err)
		}
		rows, err := OverlapByKernel(ctx, w.DB, OverlapByKernelParams{Run: run, Rank: sql.NullInt64{Valid: true}})
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, r := range rows {
			if r.Kernel == "ncclDevKernel_AllReduce_Sum_bf16_RING_LL" {
				out += fmt.Sprintf("%s launches %d dep %s longest at %d\n", r.Kernel, r.Launches, r.DepRisk, r.Longest.TSNS)
			}
		}
		return out
	}
	want := "ncclDevKernel_AllReduce_Sum_bf16_RING_LL launches 2 dep high longest at 1000000\n"
	if got := table(early, late); got != want {
		t.Errorf("the earlier trace ingested first:\n%s\nwant\n%s", got, want)
	}
	if got := table(late, early); got != want {
		t.Errorf("the later trace ingested first:\n%s\nwant\n%s", got, want)
	}
}
