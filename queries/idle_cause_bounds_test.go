package queries

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestIdleCauseBoundaries: one step on one stream of hand-made events
// (ns, from base b; each event 1000 long unless said), every gap put on
// or next to a boundary of sqllib/idle.sql's cause rules (the first rule
// that holds wins):
//
//	k1  [b, b+1000)          launched before it: no gap
//	k2  gap 30000 exactly    launched before the gap: not shorter than the
//	                         launch gap (30000), other
//	k3  gap 29999            launched before the gap: launch_latency
//	k4  gap 5000             launched at the gap's start, not after it:
//	                         launch_latency
//	k5  gap 5000             launched 1 ns after the gap's start: host_bound
//	k6  gap 5001             a cudaStreamSynchronize on the launching
//	                         thread ends 1 ns after the gap began, then
//	                         the launch: sync
//	k7  gap 5000             a cudaDeviceSynchronize ends at the gap's
//	                         start exactly, then the launch: host_bound
//	k8  gap 3000             graph launch G1 made before the gap, prev k7
//	                         no graph event: launch_latency
//	k9  gap 1000             G1 again (prev k8 is G1's): graph_internal
//	k10 gap 1000             graph launch G2 made after the gap began,
//	                         prev k9 replayed by G1: host_bound
//	k11 gap 5000             no launch: other
//
// With one stream the device gaps and the stream gaps are the same.
// Under launch_gap_ns 29999 k3's gap is not shorter either: other.
func TestIdleCauseBoundaries(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(1, "r1")
	f.trace(1, 1, 0, "decode", "formal")
	f.name(1, "", "k", "", "", "")
	const b = 1_000_000
	id := func(n int64) int64 { return 1<<32 + n } // trace 1's ordinal n
	type ev struct {
		n, ts, dur int64
		launch     int64 // launch_id, 0 = none
	}
	evs := []ev{
		{1, b, 1000, 101},
		{2, b + 31000, 1000, 102},
		{3, b + 61999, 1000, 103},
		{4, b + 67999, 1000, 104},
		{5, b + 73999, 1000, 105},
		{6, b + 80000, 1000, 106},
		{7, b + 86000, 1000, 107},
		{8, b + 90000, 1000, 201},
		{9, b + 92000, 1000, 201},
		{10, b + 94000, 1000, 202},
		{11, b + 100000, 1000, 0},
	}
	var ks []kernel
	for _, e := range evs {
		ks = append(ks, kernel{ID: id(e.n), Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: e.ts, Dur: e.dur})
	}
	f.kernelsOn(0, 7, ks...)
	for _, e := range evs {
		if e.launch != 0 {
			f.exec(`UPDATE kernels SET launch_id = ?, graph_launch = ? WHERE kernel_id = ?`, e.launch, e.launch > 200, id(e.n))
		}
	}
	f.exec(`UPDATE kernels SET step = 1`)
	// Launch calls and blocking calls on one thread (pid 10, tid 11), none
	// overlapping another.
	for _, l := range []struct {
		id   int64
		name string
		ts   int64
		dur  int64
	}{
		{101, "cudaLaunchKernel", b - 5000, 10},
		{102, "cudaLaunchKernel", b - 4000, 10},
		{103, "cudaLaunchKernel", b - 3000, 10},
		{201, "cudaGraphLaunch", b - 2000, 10},
		{104, "cudaLaunchKernel", b + 62999, 10}, // k3's end: k4's gap start
		{105, "cudaLaunchKernel", b + 69000, 10}, // k4's end + 1
		{1, "cudaStreamSynchronize", b + 74000, 1001},
		{106, "cudaLaunchKernel", b + 75100, 10},
		{2, "cudaDeviceSynchronize", b + 80500, 500}, // ends at k6's end
		{107, "cudaLaunchKernel", b + 81100, 10},
		{202, "cudaGraphLaunch", b + 93500, 10},
	} {
		f.exec(`INSERT INTO launches (launch_id, trace_id, name, ts_ns, dur_ns, pid, tid) VALUES (?, 1, ?, ?, ?, 10, 11)`,
			l.id, l.name, l.ts, l.dur)
	}
	gaps := func(launchGap int64) string {
		return schematest.Dump(t, f.db, fmt.Sprintf(`SELECT scope, kernel_id & 4294967295, prev_kernel_id & 4294967295,
				gap_start_ns - %d, gap_ns, cause
			FROM _idle_gaps_for(1, launch_gap_ns := %d) ORDER BY scope, kernel_id`, b, launchGap))
	}
	want := func(k3 string) string {
		rows := []string{
			"2 1 1000 30000 other",
			"3 2 32000 29999 " + k3,
			"4 3 62999 5000 launch_latency",
			"5 4 68999 5000 host_bound",
			"6 5 74999 5001 sync",
			"7 6 81000 5000 host_bound",
			"8 7 87000 3000 launch_latency",
			"9 8 91000 1000 graph_internal",
			"10 9 93000 1000 host_bound",
			"11 10 95000 5000 other",
		}
		var out strings.Builder
		for _, scope := range []string{"device", "stream"} {
			for _, r := range rows {
				out.WriteString(scope + " " + r + "\n")
			}
		}
		return out.String()
	}
	if got, w := gaps(30000), want("launch_latency"); got != w {
		t.Errorf("launch gap 30000:\n%s\nwant\n%s", got, w)
	}
	if got, w := gaps(29999), want("other"); got != w {
		t.Errorf("launch gap 29999:\n%s\nwant\n%s", got, w)
	}
}
