package queries

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
)

// The brute-force reference: per (trace, stage, device), cut the timeline at
// every start and end, and for each kernel walk the elementary segments it
// covers, asking directly whether another stream (a compute kernel on
// another stream) covers the segment. Quadratic and obviously right.

type groupKey struct {
	trace  int
	stage  string
	device string
}

func keyOf(k kernel) groupKey {
	return groupKey{k.Trace, k.Stage, fmtPtr(k.Device)}
}

func fmtPtr(p *int64) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}

type bruteKernel struct {
	hidden, byCompute int64
}

type bruteGroup struct {
	busy, kernelNS, first, lastEnd int64
	kernels                        int
	streams                        map[string]bool
}

func brute(ks []kernel, compute map[int]bool) (map[int64]bruteKernel, map[groupKey]*bruteGroup) {
	groups := map[groupKey][]kernel{}
	for _, k := range ks {
		groups[keyOf(k)] = append(groups[keyOf(k)], k)
	}
	perKernel := map[int64]bruteKernel{}
	perGroup := map[groupKey]*bruteGroup{}
	for key, g := range groups {
		var cuts []int64
		for _, k := range g {
			cuts = append(cuts, k.TS, k.TS+k.Dur)
		}
		sort.Slice(cuts, func(i, j int) bool { return cuts[i] < cuts[j] })
		bg := &bruteGroup{first: g[0].TS, lastEnd: g[0].TS + g[0].Dur, streams: map[string]bool{}}
		for _, k := range g {
			bg.kernels++
			bg.kernelNS += k.Dur
			bg.first = min(bg.first, k.TS)
			bg.lastEnd = max(bg.lastEnd, k.TS+k.Dur)
			bg.streams[fmtPtr(k.Stream)] = true
		}
		covers := func(j kernel, a, b int64) bool { return j.TS <= a && j.TS+j.Dur >= b }
		for i := 0; i+1 < len(cuts); i++ {
			a, b := cuts[i], cuts[i+1]
			if a == b {
				continue
			}
			for _, j := range g {
				if covers(j, a, b) {
					bg.busy += b - a
					break
				}
			}
		}
		for _, k := range g {
			var r bruteKernel
			for i := 0; i+1 < len(cuts); i++ {
				a, b := cuts[i], cuts[i+1]
				if a == b || !covers(k, a, b) {
					continue
				}
				other, otherCompute := false, false
				for _, j := range g {
					if fmtPtr(j.Stream) != fmtPtr(k.Stream) && covers(j, a, b) {
						other = true
						otherCompute = otherCompute || compute[j.Name]
					}
				}
				if other {
					r.hidden += b - a
				}
				if otherCompute {
					r.byCompute += b - a
				}
			}
			perKernel[k.ID] = r
		}
		perGroup[key] = bg
	}
	return perKernel, perGroup
}

// randomKernels draws small integer intervals so that ties, nesting,
// identical intervals, zero-length kernels and same-stream overlap are all
// frequent.
func randomKernels(rng *rand.Rand, n, run, firstTrace int, idBase int64) []kernel {
	devices := []*int64{ptr(0), ptr(1), nil}
	streams := []*int64{ptr(7), ptr(8), ptr(9), nil}
	stages := []string{"prefill", "decode"}
	var ks []kernel
	for i := range n {
		k := kernel{
			ID:     idBase + int64(i),
			Trace:  firstTrace + rng.IntN(2),
			Run:    run,
			Stage:  stages[rng.IntN(2)],
			Name:   1 + rng.IntN(6),
			TS:     int64(rng.IntN(120)),
			Device: devices[rng.IntN(len(devices))],
			Stream: streams[rng.IntN(len(streams))],
		}
		switch rng.IntN(10) {
		case 0:
			k.Dur = 0
		case 1:
			k.Dur = int64(40 + rng.IntN(40))
		default:
			k.Dur = int64(1 + rng.IntN(15))
		}
		if i > 0 && rng.IntN(12) == 0 {
			// an identical interval on a copy of an earlier kernel's slot
			p := ks[rng.IntN(len(ks))]
			k.Trace, k.Stage, k.Device, k.TS, k.Dur = p.Trace, p.Stage, p.Device, p.TS, p.Dur
			if rng.IntN(2) == 0 {
				k.Stream = p.Stream
			}
		}
		k.Rank = k.Trace % 2
		ks = append(ks, k)
	}
	return ks
}

// randomCategories: names 1..6 with categories, two of them compute, one
// unclassified (NULL category).
var randomCategories = map[int][2]string{
	1: {"gemm", "compute"},
	2: {"attention", "compute"},
	3: {"communication", "communication"},
	4: {"memcpy", "memory"},
	5: {"norm", "elementwise"},
	6: {"", ""},
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 99)) }

func TestKernelOverlapMatchesBruteForce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	db := f.db
	f.run(1, "timed")
	f.run(2, "other")
	for tr := 1; tr <= 4; tr++ {
		f.trace(tr, 1+(tr-1)/2, (tr-1)%2, "decode", "formal")
	}
	compute := map[int]bool{}
	for id := 1; id <= 6; id++ {
		c := randomCategories[id]
		f.name(id, "", fmt.Sprintf("k%d", id), "", c[0], c[1])
		compute[id] = c[1] == "compute"
	}
	// Four seeds: of eight changes to overlap.sql tried, the six that
	// failed this test with twelve failed it on seed 1 (the other two,
	// the order of an instant's points, change no length).
	for seed := uint64(1); seed <= 4; seed++ {
		f.exec(`DELETE FROM kernels`)
		rng := newRand(seed)
		ks := randomKernels(rng, 40+rng.IntN(160), 1, 1, 1<<32)
		other := randomKernels(rng, 50, 2, 3, 3<<32)
		f.kernels(append(append([]kernel{}, ks...), other...)...)

		want, _ := brute(ks, compute)
		prev, next := bruteNeighbours(ks)
		rows, err := db.Query(`SELECT kernel_id, dur_ns, hidden_ns, hidden_by_compute_ns, exclusive_ns,
			coalesce(prev_kernel_id, -1), coalesce(next_kernel_id, -1)
			FROM kernel_overlap_for(1) ORDER BY kernel_id`)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var id, dur, hid, hbc, excl, p, nx int64
			if err := rows.Scan(&id, &dur, &hid, &hbc, &excl, &p, &nx); err != nil {
				t.Fatal(err)
			}
			if p != prev[id] || nx != next[id] {
				t.Errorf("seed %d kernel %d: neighbours %d/%d, want %d/%d", seed, id, p, nx, prev[id], next[id])
			}
			n++
			w, ok := want[id]
			if !ok {
				t.Fatalf("seed %d: kernel %d is not in run 1", seed, id)
			}
			if hid != w.hidden || hbc != w.byCompute {
				t.Errorf("seed %d kernel %d: hidden %d by compute %d, want %d and %d", seed, id, hid, hbc, w.hidden, w.byCompute)
			}
			if hid+excl != dur || hid < 0 || excl < 0 || hbc > hid {
				t.Errorf("seed %d kernel %d: hidden %d + exclusive %d != dur %d (or out of range)", seed, id, hid, excl, dur)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if n != len(ks) {
			t.Fatalf("seed %d: %d rows, want %d", seed, n, len(ks))
		}

		// The view covers every run and must agree with the macro.
		var mismatches int
		err = db.QueryRow(`SELECT count(*) FROM kernel_overlap v
			FULL JOIN (SELECT * FROM kernel_overlap_for(1) UNION ALL SELECT * FROM kernel_overlap_for(2)) m USING (kernel_id)
			WHERE v.hidden_ns IS DISTINCT FROM m.hidden_ns
			   OR v.hidden_by_compute_ns IS DISTINCT FROM m.hidden_by_compute_ns`).Scan(&mismatches)
		if err != nil {
			t.Fatal(err)
		}
		if mismatches != 0 {
			t.Errorf("seed %d: view and per-run macro disagree on %d kernels", seed, mismatches)
		}
	}
}

func TestDeviceBusyMatchesBruteForce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	db := f.db
	f.run(1, "timed")
	f.trace(1, 1, 0, "decode", "formal")
	f.trace(2, 1, 1, "decode", "formal")
	compute := map[int]bool{}
	for id := 1; id <= 6; id++ {
		c := randomCategories[id]
		f.name(id, "", fmt.Sprintf("k%d", id), "", c[0], c[1])
	}
	for seed := uint64(1); seed <= 8; seed++ {
		f.exec(`DELETE FROM kernels`)
		rng := rand.New(rand.NewPCG(seed, 7))
		ks := randomKernels(rng, 30+rng.IntN(150), 1, 1, 1<<32)
		f.kernels(ks...)
		_, want := brute(ks, compute)
		// kernel_overlap's union shares add up to the same busy time.
		var mismatched int
		if err := db.QueryRow(`SELECT count(*) FROM device_busy_for(1) b
			FULL JOIN (SELECT trace_id, stage, device, sum(union_share_ns) AS busy_ns
			           FROM kernel_overlap_for(1) GROUP BY ALL) o
			  ON o.trace_id = b.trace_id AND o.stage = b.stage AND o.device IS NOT DISTINCT FROM b.device
			WHERE o.busy_ns IS DISTINCT FROM b.busy_ns`).Scan(&mismatched); err != nil {
			t.Fatal(err)
		}
		if mismatched != 0 {
			t.Errorf("seed %d: union_share_ns sums differ from device_busy_for in %d groups", seed, mismatched)
		}
		rows, err := db.Query(`SELECT trace_id, stage, coalesce(device::VARCHAR, 'NULL'),
			kernels, kernel_ns, busy_ns, first_ns, last_end_ns, streams FROM device_busy_for(1)`)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var key groupKey
			var kernels int
			var kernelNS, busy, first, lastEnd int64
			var streams int
			if err := rows.Scan(&key.trace, &key.stage, &key.device, &kernels, &kernelNS, &busy, &first, &lastEnd, &streams); err != nil {
				t.Fatal(err)
			}
			n++
			w := want[key]
			if w == nil {
				t.Fatalf("seed %d: unexpected group %+v", seed, key)
			}
			got := bruteGroup{busy: busy, kernelNS: kernelNS, first: first, lastEnd: lastEnd, kernels: kernels}
			exp := bruteGroup{busy: w.busy, kernelNS: w.kernelNS, first: w.first, lastEnd: w.lastEnd, kernels: w.kernels}
			if fmt.Sprint(got) != fmt.Sprint(exp) || streams != len(w.streams) {
				t.Errorf("seed %d group %+v: got %+v streams %d, want %+v streams %d", seed, key, got, streams, exp, len(w.streams))
			}
		}
		rows.Close()
		if n != len(want) {
			t.Errorf("seed %d: %d groups, want %d", seed, n, len(want))
		}
	}
}

// bruteNeighbours: for each kernel, the kernels starting just before and
// just after it on its stream of its (trace, stage, device), by (start,
// kernel_id); -1 when none.
func bruteNeighbours(ks []kernel) (prev, next map[int64]int64) {
	prev, next = map[int64]int64{}, map[int64]int64{}
	before := func(a, b kernel) bool { return a.TS < b.TS || a.TS == b.TS && a.ID < b.ID }
	for _, k := range ks {
		p, n := int64(-1), int64(-1)
		var pk, nk kernel
		for _, o := range ks {
			if o.ID == k.ID || keyOf(o) != keyOf(k) || fmtPtr(o.Stream) != fmtPtr(k.Stream) {
				continue
			}
			if before(o, k) && (p < 0 || before(pk, o)) {
				p, pk = o.ID, o
			}
			if before(k, o) && (n < 0 || before(o, nk)) {
				n, nk = o.ID, o
			}
		}
		prev[k.ID], next[k.ID] = p, n
	}
	return prev, next
}
