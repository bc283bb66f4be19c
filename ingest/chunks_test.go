package ingest

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestChunksMergeInOrder checks that sorting blocks and merging them yields
// exactly the records a single sort of everything gives, in that order.
func TestChunksMergeInOrder(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 8, 9, 1000} {
		c := newChunks[sweepFrame](8)
		var all []sweepFrame
		for i := 0; i < n; i++ {
			f := sweepFrame{ts: rng.Int64N(50), end: rng.Int64N(100), thread: rng.Int32N(3), ordinal: uint32(i)}
			c.add(f)
			all = append(all, f)
		}
		if c.len() != n {
			t.Fatalf("len %d, want %d", c.len(), n)
		}
		slices.SortFunc(all, func(a, b sweepFrame) int { return frameOrder(&a, &b) })
		m := c.sorted(frameOrder)
		var got []sweepFrame
		for f := m.peek(); f != nil; f = m.peek() {
			got = append(got, *f)
			m.pop()
		}
		if !slices.Equal(got, all) {
			t.Fatalf("n=%d: merged order differs from a full sort", n)
		}
	}
}
