package aggregates

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// benchGroup is a kernel-dense group of n events in start and id order:
// back-to-back compute kernels on one stream, copies on another and long
// communication kernels on a third, with ties.
func benchGroup(n int) []sweepKernel {
	rng := rand.New(rand.NewPCG(1, 2))
	ks := make([]sweepKernel, n)
	var at [3]int64
	for i := range ks {
		s := rng.IntN(10)
		k := sweepKernel{id: int64(i)}
		switch {
		case s < 7:
			k.stream, k.dur, k.comp, k.commKind = 7, 1+rng.Int64N(20000), true, commComp
		case s < 9:
			k.stream, k.dur, k.commKind = 8, 1+rng.Int64N(5000), commNeither
		default:
			k.stream, k.dur, k.commKind = 9, 1+rng.Int64N(200000), commComm
		}
		x := &at[k.stream-7]
		k.ts = *x + rng.Int64N(3)*1000
		*x = k.ts + k.dur
		ks[i] = k
	}
	slices.SortFunc(ks, func(a, b sweepKernel) int { return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.id, b.id)) })
	return ks
}

// BenchmarkSweepGroup sweeps one group of a million events held whole, as
// sweepRange does.
func BenchmarkSweepGroup(b *testing.B) {
	ks := benchGroup(1 << 20)
	b.ResetTimer()
	for b.Loop() {
		var starts int64
		g := newGroupSweep(&starts)
		g.done = make([]sweptKernel, 0, len(ks))
		g.feed(ks, true)
		if len(g.done) != len(ks) || len(g.comm.rows()) != 1 {
			b.Fatal(len(g.done))
		}
	}
}

// BenchmarkSweepPieces sweeps the same group fed in pieces, as
// sweepStreamed does.
func BenchmarkSweepPieces(b *testing.B) {
	ks := benchGroup(1 << 20)
	b.ResetTimer()
	for b.Loop() {
		var starts int64
		g := newGroupSweep(&starts)
		n := 0
		for lo := 0; lo < len(ks); lo += streamPieceKernels {
			hi := min(lo+streamPieceKernels, len(ks))
			g.feed(ks[lo:hi], hi == len(ks))
			n += len(g.done)
			g.done = g.done[:0]
		}
		if n != len(ks) || len(g.comm.rows()) != 1 {
			b.Fatal(n)
		}
	}
}
