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

// TestChunksSpillMergeInOrder: blocks sorted in the background and written
// to the spill file merge back into exactly a full sort's order, frames and
// points alike.
func TestChunksSpillMergeInOrder(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 7, 8, 9, 1000, 3*mergeWindow + 5} {
		c := newChunks[sweepFrame](8)
		if n > 1000 {
			c = newChunks[sweepFrame](2*mergeWindow + 3) // windows refilled within a block
		}
		c.sortAhead(frameOrder)
		c.spillTo(t.TempDir(), frameBytes, encFrame, decFrame)
		p := newChunks[sweepPoint](8)
		p.sortAhead(pointOrder)
		p.spillTo(t.TempDir(), pointBytes, encPoint, decPoint)
		d := newChunks[derivedRec](8)
		d.sortAhead(derivedOrder)
		d.spillTo(t.TempDir(), derivedBytes, encDerived, decDerived)
		var all []sweepFrame
		var allP []sweepPoint
		var allD []derivedRec
		for i := 0; i < n; i++ {
			r := derivedRec{ordinal: uint32(rng.Int64N(1 << 32)), value: rng.Int32() - rng.Int32(), kind: int8(1 + rng.IntN(2))}
			d.add(r)
			allD = append(allD, r)
			f := sweepFrame{ts: rng.Int64N(50) - 25, end: rng.Int64N(100), pyID: rng.Int64(), parentID: -rng.Int64N(9),
				thread: rng.Int32N(3), ordinal: uint32(i), site: rng.Int32N(1 << 30), tier: int8(rng.IntN(3))}
			c.add(f)
			all = append(all, f)
			q := sweepPoint{ts: rng.Int64N(50), correlation: rng.Int64() - rng.Int64(), extern: -rng.Int64N(9), ordinal: uint32(i),
				thread: rng.Int32N(3), kind: int8(1 + rng.IntN(2)), graph: rng.IntN(2) == 0}
			p.add(q)
			allP = append(allP, q)
		}
		slices.SortFunc(all, func(a, b sweepFrame) int { return frameOrder(&a, &b) })
		slices.SortFunc(allP, func(a, b sweepPoint) int { return pointOrder(&a, &b) })
		m, mp := c.sorted(frameOrder), p.sorted(pointOrder)
		var got []sweepFrame
		for f := m.peek(); f != nil; f = m.peek() {
			got = append(got, *f)
			m.pop()
		}
		var gotP []sweepPoint
		for q := mp.peek(); q != nil; q = mp.peek() {
			gotP = append(gotP, *q)
			mp.pop()
		}
		slices.SortFunc(allD, func(a, b derivedRec) int { return derivedOrder(&a, &b) })
		md := d.sorted(derivedOrder)
		var gotD []derivedRec
		for r := md.peek(); r != nil; r = md.peek() {
			gotD = append(gotD, *r)
			md.pop()
		}
		c.close()
		p.close()
		d.close()
		if m.err != nil || mp.err != nil || md.err != nil {
			t.Fatalf("n=%d: %v %v %v", n, m.err, mp.err, md.err)
		}
		if !slices.Equal(got, all) || !slices.Equal(gotP, allP) || !slices.Equal(gotD, allD) {
			t.Fatalf("n=%d: merged order differs from a full sort", n)
		}
	}
}

// TestSortBlockAllocatesOnce: sorting a block costs one allocation (the
// sort.Interface value), whatever its size. Sorting through a closure that
// took its records' addresses allocated twice per comparison: about 105 MB
// of garbage per block of 65 k frames.
func TestSortBlockAllocatesOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	src := make([]sweepFrame, 4096)
	for i := range src {
		src[i] = sweepFrame{ts: rng.Int64N(1000), end: rng.Int64N(2000), thread: rng.Int32N(4), ordinal: uint32(i)}
	}
	want := slices.Clone(src)
	slices.SortFunc(want, func(a, b sweepFrame) int { return frameOrder(&a, &b) })
	b := make([]sweepFrame, len(src))
	allocs := testing.AllocsPerRun(5, func() {
		copy(b, src)
		sortBlock(b, frameOrder)
	})
	if !slices.Equal(b, want) {
		t.Fatal("sortBlock's order differs from slices.SortFunc's")
	}
	if allocs > 1 {
		t.Errorf("sortBlock of %d frames: %.0f allocations, want at most 1", len(src), allocs)
	}
}

// BenchmarkSortBlock sorts one sweep block of frames (bench/README.md).
func BenchmarkSortBlock(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	src := make([]sweepFrame, sweepChunk)
	for i := range src {
		src[i] = sweepFrame{ts: rng.Int64N(1 << 40), end: rng.Int64N(1 << 41), thread: rng.Int32N(4), ordinal: uint32(i)}
	}
	buf := make([]sweepFrame, len(src))
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, src)
		sortBlock(buf, frameOrder)
	}
}
