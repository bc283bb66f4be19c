package ingest

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestHeldKernelsRoundTrip holds random GPU events (absent values, extreme
// integers, empty and long grid and block strings) and reads them back,
// kept in memory and spilled to the file a few records at a time, and
// with the file failing: every record comes back as it went in, in order.
func TestHeldKernelsRoundTrip(t *testing.T) {
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
			strs := []string{"", "[1,1,1]", "[4096,1,1]", strings.Repeat("x", 300), "[\"a\",null]"}
			h := newHeldKernels(c.dir)
			h.spillAt = c.spillAt
			defer h.close()
			var want []kernelRow
			ord := int64(0)
			for range 2000 {
				ord += pick(0, 1, 1, 2, 1000, 1<<31)
				k := kernelRow{ordinal: ord, nameID: int32(rng.Int64N(1 << 31)), kind: uint8(rng.IntN(3)),
					ts: some(), dur: some(), device: some(), stream: some(), correlation: some(),
					externalID: some(), bytes: some(), grid: strs[rng.IntN(len(strs))], block: strs[rng.IntN(len(strs))]}
				h.add(&k)
				want = append(want, k)
			}
			if c.name == "spilled" && h.written == 0 {
				t.Fatal("nothing spilled")
			}
			if c.name == "no file" && (h.written != 0 || !h.failed) {
				t.Fatalf("written %d, failed %v: want everything kept in memory", h.written, h.failed)
			}
			r := h.reader()
			for i, w := range want {
				got, err := r.next()
				if err != nil {
					t.Fatal(err)
				}
				if got == nil || *got != w {
					t.Fatalf("record %d: got %+v, want %+v", i, got, w)
				}
			}
			if got, err := r.next(); got != nil || err != nil {
				t.Fatalf("after the last: %+v, %v", got, err)
			}
		})
	}
}
