package ingest

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestHeldRoundTrip holds random kernels, launches and CPU ops (absent
// values, extreme integers, empty and long strings) and reads them back,
// kept in memory, spilled to the file a few records at a time, and with
// the file failing: every record comes back as it went in, in order, with
// its ordinal.
func TestHeldRoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		dir     string
		spillAt int
	}{
		{"memory", t.TempDir(), heldSpillBytes},
		{"spilled", t.TempDir(), 64},
		{"no file", t.TempDir() + "/missing", 64},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(7, uint64(c.spillAt)))
			pick := func(vs ...int64) int64 { return vs[rng.IntN(len(vs))] }
			some := func() int64 {
				return pick(null, 0, -1, 1, math.MaxInt64, math.MinInt64+1, rng.Int64(), -rng.Int64N(1<<40))
			}
			strs := []string{"", "[1,1,1]", "[4096,1,1]", strings.Repeat("x", 300), "[\"a\",null]", "aten::mm"}
			str := func() string { return strs[rng.IntN(len(strs))] }
			kernels := newHeld(c.dir, encHeldKernel, decHeldKernel)
			launches := newHeld(c.dir, encHeldLaunch, decHeldLaunch)
			ops := newHeld(c.dir, encHeldOp, decHeldOp)
			for _, h := range []interface{ close() }{kernels, launches, ops} {
				defer h.close()
			}
			kernels.spillAt, launches.spillAt, ops.spillAt = c.spillAt, c.spillAt, c.spillAt
			var wantK []kernelRow
			var wantL []launchRow
			var wantO []opRow
			ord := int64(0)
			for range 3000 {
				ord += pick(0, 1, 1, 2, 1000, 1<<31)
				switch rng.IntN(3) {
				case 0:
					k := kernelRow{ordinal: ord, nameID: int32(rng.Int64N(1 << 31)), kind: uint8(rng.IntN(3)),
						ts: some(), dur: some(), device: some(), stream: some(), correlation: some(),
						externalID: some(), bytes: some(), grid: str(), block: str()}
					kernels.add(ord, &k)
					wantK = append(wantK, k)
				case 1:
					l := launchRow{ordinal: ord, name: str(), ts: some(), dur: some(), pid: some(), tid: some(),
						correlation: some(), externalID: some(), graph: rng.IntN(2) == 0}
					launches.add(ord, &l)
					wantL = append(wantL, l)
				default:
					o := opRow{ordinal: ord, name: str(), ts: some(), dur: some(), pid: some(), tid: some(),
						externalID: some(), seq: some(), dims: str(), types: str()}
					ops.add(ord, &o)
					wantO = append(wantO, o)
				}
			}
			if c.name == "spilled" && (kernels.written == 0 || launches.written == 0 || ops.written == 0) {
				t.Fatal("nothing spilled")
			}
			if c.name == "no file" && (ops.written != 0 || !ops.failed) {
				t.Fatalf("written %d, failed %v: want everything kept in memory", ops.written, ops.failed)
			}
			checkHeld(t, kernels, wantK, func(k *kernelRow, ord int64) { k.ordinal = ord })
			checkHeld(t, launches, wantL, func(l *launchRow, ord int64) { l.ordinal = ord })
			checkHeld(t, ops, wantO, func(o *opRow, ord int64) { o.ordinal = ord })
		})
	}
}

// checkHeld reads h back and compares each record (given its ordinal by
// set) with want's.
func checkHeld[T any](t *testing.T, h *held[T], want []T, set func(*T, int64)) {
	t.Helper()
	r := h.reader()
	for i, w := range want {
		got, ord, err := r.next()
		if err != nil {
			t.Fatal(err)
		}
		if got == nil {
			t.Fatalf("record %d of %d: none", i, len(want))
		}
		set(got, ord)
		if any(*got) != any(w) {
			t.Fatalf("record %d: got %+v, want %+v", i, *got, w)
		}
	}
	if got, _, err := r.next(); got != nil || err != nil {
		t.Fatalf("after the last: %+v, %v", got, err)
	}
}
