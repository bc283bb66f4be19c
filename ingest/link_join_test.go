package ingest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLinkJoinsMatchBruteForce links random kernels, launches, ops,
// stage windows and steps through the sorted, spilled blocks and merge
// joins of linkRecs (blocks of 3 records, so every list spills and merges
// many blocks), and compares every kernel's row with one computed from
// link_kernels.sql's and link_steps.sql's definitions by brute force.
// Small value ranges make ties, shared correlation and External ids,
// NULLs and nested windows common.
func TestLinkJoinsMatchBruteForce(t *testing.T) {
	t.Parallel()
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 38))
		maybe := func(n int64) int64 { // NULL one time in five
			if rng.IntN(5) == 0 {
				return null
			}
			return rng.Int64N(n)
		}
		var r linkRecs
		r.init(false, t.TempDir(), 3)
		var kernels []linkKernel
		var launches []linkLaunch
		var ops []linkOp
		var gpuWins, cpuWins []stageWindow
		n := 1 + rng.IntN(60)
		ord := uint32(0)
		for range n {
			b := &decoded{}
			switch rng.IntN(4) {
			case 0:
				k := kernelRow{ordinal: int64(ord), ts: rng.Int64N(40), device: maybe(3), stream: maybe(3),
					correlation: maybe(12), externalID: maybe(8)}
				if rng.IntN(10) == 0 && k.device != null {
					k.device += 1 << 33 // stored as an INTEGER: cut to 32 bits
				}
				b.kernels = append(b.kernels, k)
				dev := k.device
				if dev != null {
					dev = int64(int32(dev))
				}
				kernels = append(kernels, linkKernel{ts: k.ts, device: dev, stream: k.stream, correlation: k.correlation, extern: k.externalID, ordinal: ord})
			case 1:
				l := linkLaunch{ts: rng.Int64N(40), correlation: maybe(12), extern: maybe(8), pid: maybe(2), tid: maybe(2),
					ordinal: ord, site: noSite, graph: rng.IntN(6) == 0}
				if l.pid == null && l.tid == null {
					b.launches = append(b.launches, launchRow{ordinal: int64(ord), ts: l.ts, pid: l.pid, tid: l.tid,
						correlation: l.correlation, externalID: l.extern, graph: l.graph})
				} else {
					site := rng.Int32N(4) // 0: the sweep found none
					if site != 0 {
						l.site = site
					}
					r.point(&sweepPoint{ts: l.ts, correlation: l.correlation, extern: l.extern, ordinal: ord, kind: derivedLaunchSite, graph: l.graph},
						site, [2]int64{l.pid, l.tid})
				}
				launches = append(launches, l)
			case 2:
				o := linkOp{ts: rng.Int64N(40), extern: maybe(8), ordinal: ord, site: noSite}
				site := rng.Int32N(4)
				if site != 0 {
					o.site = site
				}
				r.point(&sweepPoint{ts: o.ts, correlation: null, extern: o.extern, ordinal: ord, kind: derivedOpSite}, site, [2]int64{1, 1})
				ops = append(ops, o)
			case 3:
				a := annotationRow{cat: []string{"gpu_user_annotation", "user_annotation", "cpu_instant_event"}[rng.IntN(3)],
					ts: rng.Int64N(40), dur: rng.Int64N(20) - 2, pid: maybe(3), tid: maybe(2), stage: []string{"", "prefill", "decode", "mixed"}[rng.IntN(4)]}
				b.annotations = append(b.annotations, a)
				if a.stage != "" && a.pid != null {
					w := stageWindow{group: [2]int64{a.pid, 0}, ts: a.ts, end: a.ts + a.dur, stage: a.stage}
					if a.cat == "user_annotation" && a.tid != null {
						w.group[1] = a.tid
						cpuWins = append(cpuWins, w)
					} else if a.cat == "gpu_user_annotation" {
						gpuWins = append(gpuWins, w)
					}
				}
			}
			r.hold(b)
			ord += 1 + uint32(rng.IntN(3))
		}
		// steps: back-to-back windows with gaps, absolute times
		const key, base = int64(7) << 32, int64(1000)
		var gpuSteps, cpuSteps []stepWindow
		for i, t := int32(1), base+rng.Int64N(5); t < base+45; i++ {
			w := stepWindow{ts: t, end: t + 1 + rng.Int64N(8), step: i}
			if rng.IntN(2) == 0 {
				gpuSteps = append(gpuSteps, w)
			} else {
				cpuSteps = append(cpuSteps, w)
			}
			t = w.end + rng.Int64N(3)
		}
		stageKnown, window := seed%5 == 4, seed%7 == 6
		cur, err := r.link(key, base, stageKnown, gpuSteps, cpuSteps, window)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			row, err := cur.next()
			if err != nil {
				t.Fatal(err)
			}
			if row == nil {
				break
			}
			got = append(got, fmt.Sprintf("%+v", *row))
		}
		cur.close()
		r.close()
		want := bruteLink(kernels, launches, ops, gpuWins, cpuWins, key, base, stageKnown, gpuSteps, cpuSteps, window)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: linked\n%v\nwant\n%v", seed, got, want)
		}
	}
}

// bruteLink is link_kernels.sql and link_steps.sql, kernel by kernel, over
// every record: rows in kernel_id order, as fmt's %+v of linked.
func bruteLink(kernels []linkKernel, launches []linkLaunch, ops []linkOp, gpuWins, cpuWins []stageWindow, key, base int64, stageKnown bool,
	gpuSteps, cpuSteps []stepWindow, window bool) []string {
	// the latest at or before ts (by time, then ordinal), else the latest
	better := func(aTS int64, aOrd uint32, bTS int64, bOrd uint32, ts int64) bool {
		aIn, bIn := aTS <= ts, bTS <= ts
		if aIn != bIn {
			return aIn
		}
		return aTS > bTS || aTS == bTS && aOrd > bOrd
	}
	innermost := func(wins []stageWindow, g [2]int64, t int64) string {
		var best *stageWindow
		for i := range wins {
			w := &wins[i]
			if w.group != g || w.ts > t || t >= w.end {
				continue
			}
			if best == nil || w.ts > best.ts || w.ts == best.ts && (w.end < best.end || w.end == best.end && w.stage < best.stage) {
				best = w
			}
		}
		if best == nil {
			return ""
		}
		return best.stage
	}
	stepOf := func(ws []stepWindow, t int64) (int64, bool) {
		for _, w := range ws {
			if w.ts <= t && t < w.end {
				return int64(w.step), true
			}
		}
		return 0, false
	}
	var out []string
	for _, k := range kernels {
		o := linked{kernelID: key + int64(k.ordinal), launchID: null, opID: null, site: null, ts: k.ts + base, step: null}
		var l *linkLaunch
		for i := range launches {
			c := &launches[i]
			if k.correlation != null && c.correlation == k.correlation && (l == nil || better(c.ts, c.ordinal, l.ts, l.ordinal, k.ts)) {
				l = c
			}
		}
		ext := k.extern
		if l != nil {
			o.launchID, o.graph = key+int64(l.ordinal), l.graph
			if ext == null {
				ext = l.extern
			}
		}
		var op *linkOp
		for i := range ops {
			c := &ops[i]
			if ext != null && c.extern == ext && (op == nil || better(c.ts, c.ordinal, op.ts, op.ordinal, k.ts)) {
				op = c
			}
		}
		if op != nil {
			o.opID = key + int64(op.ordinal)
		}
		switch {
		case l != nil && l.graph:
		case l != nil && l.site != noSite:
			o.site = int64(l.site)
		case op != nil && op.site != noSite:
			o.site = int64(op.site)
		}
		pos := int64(1)
		for _, x := range kernels {
			if x.device == k.device && x.stream == k.stream && (x.ts < k.ts || x.ts == k.ts && x.ordinal < k.ordinal) {
				pos++
			}
		}
		o.streamPos = pos
		if !stageKnown {
			if k.device != null {
				o.stage = innermost(gpuWins, [2]int64{k.device, 0}, k.ts)
			}
			if o.stage == "" && l != nil && l.pid != null && l.tid != null {
				o.stage = innermost(cpuWins, [2]int64{l.pid, l.tid}, l.ts)
			}
		}
		if window {
			o.step = 0
		} else if s, ok := stepOf(gpuSteps, o.ts); ok {
			o.step = s
		} else if l != nil {
			if s, ok := stepOf(cpuSteps, l.ts+base); ok {
				o.step = s
			}
		}
		out = append(out, fmt.Sprintf("%+v", o))
	}
	return out
}
