package queries

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

func TestTimelineBounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ ts, dur, from, to int64 }{
		{1_000_000, 1_000, 1_000_000 - 14_000, 1_000_000 + 26_000},     // 40 us floor, 35% before
		{1_000_000, 100_000, 1_000_000 - 210_000, 1_000_000 + 390_000}, // 6 x dur
		{5, 0, 5 - 14_000, 5 + 26_000},                                 // zero-length instance
	} {
		from, to := TimelineBounds(c.ts, c.dur)
		if from != c.from || to != c.to {
			t.Errorf("TimelineBounds(%d, %d) = %d, %d; want %d, %d", c.ts, c.dur, from, to, c.from, c.to)
		}
	}
}

// The window around gemm's longest instance in the hand-made overlap case
// (0..100 us on decode trace 1): 600 us from -210 us, so everything of
// trace 1 / device 0 that overlaps [-210, 390) us, on every stream.
func TestTimelineAround(t *testing.T) {
	t.Parallel()
	db := overlapCase(t)
	ctx := context.Background()
	rows, err := OverlapByKernel(ctx, db, OverlapByKernelParams{Run: 1, Rank: sql.NullInt64{Valid: true}, Stage: stageOnly("decode"), MinShare: 1})
	if err != nil {
		t.Fatal(err)
	}
	var inst Instance
	for _, r := range rows {
		if r.Kernel == "gemm" {
			inst = r.Longest
		}
	}
	from, to, events, err := TimelineAround(ctx, db, inst)
	if err != nil {
		t.Fatal(err)
	}
	if from != -210_000 || to != 390_000 {
		t.Errorf("window [%d, %d), want [-210000, 390000)", from, to)
	}
	var got []string
	for _, e := range events {
		got = append(got, fmt.Sprintf("%d %s %s %d %d", e.Stream.Int64, e.Name, e.Category, e.TSNS, e.DurNS))
	}
	want := []string{
		"7 gemm compute 0 100000",
		"7 rmsnorm elementwise 100500 10000",
		"7 quant elementwise 300000 20000",
		"20 all_gather_small communication 0 50000",
		"20 allreduce communication 200000 60000",
		"30 memcpy memory 0 30000",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A window ending where an event starts (custom_op at 600 us) leaves it
	// out; a zero-length event at the window's start is in.
	fixture{t, db}.kernels(kernel{ID: 99, Trace: 1, Run: 1, Stage: "decode", Name: 4, TS: 500_000,
		Device: ptr(0), Stream: ptr(30)})
	events, err = TimelineWindow(ctx, db, TimelineWindowParams{Trace: 1, Device: inst.Device, FromNS: 500_000, ToNS: 600_000})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, e := range events {
		got = append(got, fmt.Sprintf("%s %d", e.Name, e.DurNS))
	}
	if strings.Join(got, ",") != "tiny 2000,memcpy 0" {
		t.Errorf("[500, 600) us: %v, want the zero-length memcpy and tiny", got)
	}
}
