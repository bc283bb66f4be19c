package queries

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/aggregates"
)

// Stage totals of the hand-made case of overlap_by_kernel_test.go, computed
// and then read from a saved copy.
func TestStageBusy(t *testing.T) {
	t.Parallel()
	db := overlapCase(t)
	ctx := context.Background()
	want := strings.Join([]string{
		// prefill: [1000,1020) + [1030,1040); 6 kernels, 70 us of kernel
		// time, streams 7, 20, 30, 40, 41
		"prefill stage - - - 6 70000 30000 40000 5",
		"prefill device 0 2 0 6 70000 30000 40000 5",
		// decode: rank 0 as in the overlap test (286.5 us of kernels, 206.5
		// us busy, 3 streams, 0..615 us), rank 1 a lone 70 us gemm
		"decode stage - - - 10 356500 276500 615000 4",
		"decode device 0 1 0 9 286500 206500 615000 3",
		"decode device 1 3 0 1 70000 70000 70000 1",
	}, "\n")
	dump := func(rows []StageBusyRow) string {
		var out []string
		for _, r := range rows {
			opt := func(v sql.NullInt64) string {
				if !v.Valid {
					return "-"
				}
				return fmt.Sprint(v.Int64)
			}
			out = append(out, fmt.Sprintf("%s %s %s %s %s %d %d %d %d %d", r.Stage, r.Level, opt(r.Rank), opt(r.TraceID),
				opt(r.Device), r.Kernels, r.KernelNS, r.BusyNS, r.WindowNS, r.Streams))
		}
		return strings.Join(out, "\n")
	}
	for _, stored := range []bool{false, true} {
		if stored {
			if err := aggregates.SaveOverlap(ctx, db, 1); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := StageBusy(ctx, db, StageBusyParams{Run: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := dump(rows); got != want {
			t.Errorf("stored %v:\ngot:\n%s\nwant:\n%s", stored, got, want)
		}
		rows, err = StageBusy(ctx, db, StageBusyParams{Run: 1, Rank: sql.NullInt64{Int64: 1, Valid: true}, Stage: stageOnly("decode")})
		if err != nil {
			t.Fatal(err)
		}
		if got := dump(rows); got != "decode stage - - - 1 70000 70000 70000 1\ndecode device 1 3 0 1 70000 70000 70000 1" {
			t.Errorf("stored %v, rank 1 decode:\n%s", stored, got)
		}
	}
}
