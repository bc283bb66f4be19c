package queries

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"
)

// overlapCase builds a small run whose overlap table is worked out by hand
// (see the comments next to each kernel).
//
// decode, trace 1, device 0; streams 7 (main), 20 (communication), 30 (side):
//
//	s7  gemm [0,100) rmsnorm [100.5,110.5)  quant [300,320)  custom_op [600,610) odd [610.5,615)
//	s20 all_gather_small [0,50)  allreduce [200,260)
//	s30 memcpy [0,30)  tiny [500,502)
//
// prefill, trace 2, device 0:
//
//	s7 flash [1000,1010)  s20 allgather [1010,1020)  s30 silu [1000,1020)
//	s30 gelu [1030,1040)  s40 b_comm [1030,1040)  s41 a_comm [1030,1040)
//
// (times in us from 0; rank 1's trace 3 repeats gemm alone, to test --rank.)
func overlapCase(t *testing.T) *sql.DB {
	f := newFixture(t)
	db := f.db
	f.run(1, "case")
	f.trace(1, 1, 0, "decode", "formal")
	f.trace(2, 1, 0, "prefill", "formal")
	f.trace(3, 1, 1, "decode", "formal")
	names := []struct {
		id             int
		short, fam, ca string
	}{
		{1, "gemm", "gemm", "compute"},
		{2, "allreduce", "communication", "communication"},
		{3, "rmsnorm", "norm", "elementwise"},
		{4, "memcpy", "memcpy", "memory"},
		{5, "tiny", "elementwise", "elementwise"},
		{6, "flash", "attention", "compute"},
		{7, "all_gather_small", "communication", "communication"},
		{8, "quant", "quantize", "elementwise"},
		{9, "silu", "activation", "elementwise"},
		{10, "allgather", "communication", "communication"},
		{11, "gelu", "activation", "elementwise"},
		{12, "b_comm", "communication", "communication"},
		{13, "a_comm", "communication", "communication"},
		{14, "custom_op", "other", "other"},
		{15, "odd", "other", "other"},
	}
	for _, n := range names {
		f.name(n.id, "", n.short, "", n.fam, n.ca)
	}
	f.site(1, "python/sglang/srt/layers/linear.py", 10, "forward", "python/sglang/srt/layers/linear.py")
	f.site(2, "python/sglang/srt/distributed/comm.py", 20, "all_reduce", "python/sglang/srt/distributed/comm.py")
	f.site(3, "python/sglang/srt/layers/linear.py", 30, "norm", "python/sglang/srt/layers/linear.py")
	f.site(4, "python/sglang/srt/mem.py", 40, "copy", "python/sglang/srt/mem.py")
	f.site(5, "python/sglang/srt/layers/act.py", 50, "act", "python/sglang/srt/layers/act.py")
	f.site(6, "python/sglang/srt/custom.py", 60, "custom", "python/sglang/srt/custom.py")
	for i, op := range []string{"aten::mm", "nccl:all_reduce", "aten::rms_norm", "aten::copy_"} {
		f.cpuOp(int64(i+1), 1, op)
	}
	us := func(v float64) int64 { return int64(math.Round(v * 1000)) }
	k := func(id int64, trace int, stage string, name int, stream int64, from, to float64, site, op int64) kernel {
		return kernel{ID: id, Trace: trace, Run: 1, Rank: map[int]int{1: 0, 2: 0, 3: 1}[trace], Stage: stage, Name: name,
			TS: us(from), Dur: us(to) - us(from), Device: ptr(0), Stream: ptr(stream), Site: site, Op: op}
	}
	f.kernels(
		k(1, 1, "decode", 1, 7, 0, 100, 1, 1),
		k(2, 1, "decode", 3, 7, 100.5, 110.5, 3, 3),
		k(3, 1, "decode", 4, 30, 0, 30, 4, 4),
		k(4, 1, "decode", 7, 20, 0, 50, 2, 2),
		k(5, 1, "decode", 2, 20, 200, 260, 2, 2),
		k(6, 1, "decode", 5, 30, 500, 502, 5, 0),
		k(7, 1, "decode", 8, 7, 300, 320, 0, 0),
		k(8, 1, "decode", 14, 7, 600, 610, 6, 0),
		k(9, 1, "decode", 15, 7, 610.5, 615, 0, 0),
		k(10, 2, "prefill", 9, 30, 1000, 1020, 5, 0),
		k(11, 2, "prefill", 6, 7, 1000, 1010, 1, 0),
		k(12, 2, "prefill", 10, 20, 1010, 1020, 2, 0),
		k(13, 2, "prefill", 11, 30, 1030, 1040, 5, 0),
		k(14, 2, "prefill", 12, 40, 1030, 1040, 2, 0),
		k(15, 2, "prefill", 13, 41, 1030, 1040, 2, 0),
		k(16, 3, "decode", 1, 7, 0, 70, 1, 0),
	)
	return db
}

// rowLine prints the columns a reader checks, percentages to 0.01.
// dominantOrDash shows a row without a dominant kernel as "-".
func dominantOrDash(r OverlapByKernelRow) string {
	if !r.Dominant.Valid {
		return "-"
	}
	return r.Dominant.String
}

func rowLine(r OverlapByKernelRow) string {
	return fmt.Sprintf("%s %s %s %s | %s | %d %d %d %d | %.2f %.2f %.2f | %s %s %s",
		r.Stage, r.Priority, r.Verdict, r.Kernel, r.Scope,
		r.TotalNS, r.HiddenNS, r.HiddenByComp, r.ExclusiveNS,
		r.BusySharePct, r.ExclusivePct, r.HiddenPct, dominantOrDash(r), r.DepRisk, r.Recommendation)
}

func TestOverlapByKernelHandMade(t *testing.T) {
	t.Parallel()
	db := overlapCase(t)
	ctx := context.Background()
	rank0 := sql.NullInt64{Int64: 0, Valid: true}

	// Prefill busy: [1000,1020) + [1030,1040) = 30 us.
	// Decode busy (rank 0): [0,100) [100.5,110.5) [200,260) [300,320)
	// [500,502) [600,610) [610.5,615) = 206.5 us.
	pct := func(part, whole float64) float64 { return 100 * part / whole }
	want := []string{
		// Prefill: everything is hidden. Dominant ties: silu meets flash and
		// allgather for 10 us each -> compute first; gelu meets a_comm and
		// b_comm equally -> by name; a_comm/b_comm meet each other and gelu
		// equally -> communication before elementwise.
		fmt.Sprintf("prefill P4 hidden a_comm | comm.py | 10000 10000 0 0 | %.2f 0.00 100.00 | b_comm low skip overlap", pct(10, 30)),
		fmt.Sprintf("prefill P4 hidden allgather | comm.py | 10000 10000 0 0 | %.2f 0.00 100.00 | silu low skip overlap", pct(10, 30)),
		fmt.Sprintf("prefill P4 hidden b_comm | comm.py | 10000 10000 0 0 | %.2f 0.00 100.00 | a_comm low skip overlap", pct(10, 30)),
		fmt.Sprintf("prefill P4 hidden flash | linear.py | 10000 10000 0 0 | %.2f 0.00 100.00 | silu low skip overlap", pct(10, 30)),
		fmt.Sprintf("prefill P4 low-roi-hidden gelu | act.py | 10000 10000 0 0 | %.2f 0.00 100.00 | a_comm low skip overlap", pct(10, 30)),
		fmt.Sprintf("prefill P4 low-roi-hidden silu | act.py | 20000 20000 10000 0 | %.2f 0.00 100.00 | flash low skip overlap", pct(20, 30)),
		// Decode.
		// allreduce: alone on stream 20, previous event 150 us before: P1.
		fmt.Sprintf("decode P1 headroom allreduce | comm.py | 60000 0 0 60000 | %.2f 100.00 0.00 | - low try overlap", pct(60, 206.5)),
		// custom_op: next event 0.5 us later (tight), category other, no
		// shared file/function/op, but the neighbour has no site: unclear.
		fmt.Sprintf("decode P2 headroom custom_op | custom.py | 10000 0 0 10000 | %.2f 100.00 0.00 | - unclear check deps", pct(10, 206.5)),
		// rmsnorm: 0.5 us after gemm, same file, and elementwise after compute.
		fmt.Sprintf("decode P2 headroom rmsnorm | linear.py | 10000 0 0 10000 | %.2f 100.00 0.00 | - high check deps", pct(10, 206.5)),
		// gemm: hidden by memcpy [0,30) and all_gather_small [0,50): 50 us.
		fmt.Sprintf("decode P3 headroom gemm | linear.py | 100000 50000 0 50000 | %.2f 50.00 50.00 | all_gather_small high observe later", pct(100, 206.5)),
		// quant: exclusive, no site.
		fmt.Sprintf("decode P3 headroom quant | unmapped | 20000 0 0 20000 | %.2f 100.00 0.00 | - low manual check", pct(20, 206.5)),
		fmt.Sprintf("decode P4 hidden all_gather_small | comm.py | 50000 50000 50000 0 | %.2f 0.00 100.00 | gemm low skip overlap", pct(50, 206.5)),
		// memcpy: gemm and all_gather_small cover it 30 us each -> compute.
		fmt.Sprintf("decode P4 low-roi-hidden memcpy | mem.py | 30000 30000 30000 0 | %.2f 0.00 100.00 | gemm low skip overlap", pct(30, 206.5)),
	}
	// tiny (2 us) and odd (4.5 us) are P5, under the 5 us floor; odd
	// follows custom_op by 0.5 us and has no site itself, hence unclear.
	// --min-share 1 hides tiny (0.97% of busy) but shows odd (2.18%): the
	// filter is on share alone, never on priority.
	odd := fmt.Sprintf("decode P5 negligible odd | unmapped | 4500 0 0 4500 | %.2f 100.00 0.00 | - unclear skip overlap", pct(4.5, 206.5))
	tiny := fmt.Sprintf("decode P5 negligible tiny | act.py | 2000 0 0 2000 | %.2f 100.00 0.00 | - low skip overlap", pct(2, 206.5))
	rows, err := OverlapByKernel(ctx, db, OverlapByKernelParams{Run: 1, Rank: rank0, MinShare: 1})
	if err != nil {
		t.Fatal(err)
	}
	compareRows(t, "rank 0, min-share 1", rows, append(append([]string{}, want...), odd))

	// --min-share 0 shows every row.
	rows, err = OverlapByKernel(ctx, db, OverlapByKernelParams{Run: 1, Rank: rank0, MinShare: 0})
	if err != nil {
		t.Fatal(err)
	}
	compareRows(t, "rank 0, min-share 0", rows, append(append([]string{}, want...), odd, tiny))

	// A higher bar only hides rows (priorities stay); MaxRows caps each
	// stage.
	rows, err = OverlapByKernel(ctx, db, OverlapByKernelParams{Run: 1, Rank: rank0, Stage: stageOnly("decode"), MinShare: 20, MaxRows: 2})
	if err != nil {
		t.Fatal(err)
	}
	compareRows(t, "decode, min-share 20, 2 rows", rows, []string{
		fmt.Sprintf("decode P1 headroom allreduce | comm.py | 60000 0 0 60000 | %.2f 100.00 0.00 | - low try overlap", pct(60, 206.5)),
		fmt.Sprintf("decode P3 headroom gemm | linear.py | 100000 50000 0 50000 | %.2f 50.00 50.00 | all_gather_small high observe later", pct(100, 206.5)),
	})

	// Every rank: rank 1's lone gemm (70 us, exclusive) joins the decode
	// gemm row and the decode busy time.
	rows, err = OverlapByKernel(ctx, db, OverlapByKernelParams{Run: 1, Stage: stageOnly("decode"), MinShare: 1})
	if err != nil {
		t.Fatal(err)
	}
	var gemm *OverlapByKernelRow
	for i := range rows {
		if rows[i].Kernel == "gemm" {
			gemm = &rows[i]
		}
	}
	if gemm == nil || gemm.TotalNS != 170000 || gemm.ExclusiveNS != 120000 || gemm.StageBusyNS != 276500 || gemm.Launches != 2 {
		t.Errorf("all ranks: gemm row %+v, want total 170000, exclusive 120000, busy 276500, 2 launches", gemm)
	}
	// The longest instance anchors the timeline.
	if gemm != nil && (gemm.Longest.KernelID != 1 || gemm.Longest.TraceID != 1 || gemm.Longest.DurNS != 100000 ||
		gemm.Longest.Stream.Int64 != 7 || gemm.Longest.Device.Int64 != 0) {
		t.Errorf("gemm longest instance %+v", gemm.Longest)
	}
}

// TestOverlapMinShareNeverChangesPriority: a kernel under 1% of busy time
// is P5 whatever --min-share displays; --min-share 0
// used to turn such a kernel into P1.
func TestOverlapMinShareNeverChangesPriority(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	db := f.db
	f.run(1, "small")
	f.trace(1, 1, 0, "decode", "formal")
	f.name(1, "", "gemm", "", "gemm", "compute")
	f.name(2, "", "allreduce", "", "communication", "communication")
	f.site(1, "python/sglang/srt/layers/linear.py", 10, "forward", "python/sglang/srt/layers/linear.py")
	f.site(2, "python/sglang/srt/distributed/comm.py", 20, "all_reduce", "python/sglang/srt/distributed/comm.py")
	// gemm [0, 1000 us) on stream 7; allreduce [2000, 2007 us) alone on
	// stream 20, long after: exclusive headroom, 7 / 1007 = 0.695% of busy.
	f.kernels(
		kernel{ID: 1, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 0, Dur: 1_000_000, Device: ptr(0), Stream: ptr(7), Site: 1},
		kernel{ID: 2, Trace: 1, Run: 1, Stage: "decode", Name: 2, TS: 2_000_000, Dur: 7_000, Device: ptr(0), Stream: ptr(20), Site: 2},
	)
	ar := fmt.Sprintf("decode P5 headroom allreduce | comm.py | 7000 0 0 7000 | %.2f 100.00 0.00 | - low skip overlap", 100*7.0/1007)
	gemm := fmt.Sprintf("decode P3 headroom gemm | linear.py | 1000000 0 0 1000000 | %.2f 100.00 0.00 | - low observe later", 100*1000.0/1007)
	for _, c := range []struct {
		min  float64
		want []string
	}{
		{0, []string{gemm, ar}},
		{0.5, []string{gemm, ar}},
		{1, []string{gemm}},
	} {
		rows, err := OverlapByKernel(context.Background(), db, OverlapByKernelParams{Run: 1, MinShare: c.min})
		if err != nil {
			t.Fatal(err)
		}
		compareRows(t, fmt.Sprintf("min-share %g", c.min), rows, c.want)
	}
}

func compareRows(t *testing.T, what string, rows []OverlapByKernelRow, want []string) {
	t.Helper()
	got := make([]string, len(rows))
	for i, r := range rows {
		got[i] = rowLine(r)
		// Scopes are compared by file name; the full display is checked below.
		if j := strings.Index(got[i], "| "); j >= 0 {
			rest := got[i][j+2:]
			k := strings.Index(rest, " |")
			scope := rest[:k]
			if scope != "unmapped" {
				scope = scope[strings.LastIndex(scope, "/")+1:]
				scope = scope[:strings.IndexByte(scope, ':')]
			}
			got[i] = got[i][:j+2] + scope + rest[k:]
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, r := range rows {
		if r.HiddenNS+r.ExclusiveNS != r.TotalNS {
			t.Errorf("%s: %s hidden + exclusive != total", what, r.Kernel)
		}
	}
}

// On random interval sets the per-name sums and the dominant overlapping
// kernel (pairwise overlap summed over instances, with its tie-breaks) equal
// a brute-force pass over every pair, and the output is identical twice.
func TestOverlapByKernelRandomDominant(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	db := f.db
	f.run(1, "timed")
	f.trace(1, 1, 0, "decode", "formal")
	f.trace(2, 1, 1, "decode", "formal")
	catRank := map[string]int{"compute": 0, "communication": 1, "memory": 2, "elementwise": 3, "other": 4, "": 5}
	compute := map[int]bool{}
	for id := 1; id <= 6; id++ {
		c := randomCategories[id]
		f.name(id, "", fmt.Sprintf("k%d", id), "", c[0], c[1])
		compute[id] = c[1] == "compute"
	}
	ctx := context.Background()
	// Three seeds: of the changes to the pairs, the dominant's order and
	// the overlap sweep that failed this test with ten, five failed every
	// seed; the other two (the category tie-break, an idle stream's gaps
	// counted) failed seeds 6-9 only, and fail TestOverlapByKernelHandMade
	// and TestKernelOverlapStore too.
	for seed := uint64(1); seed <= 3; seed++ {
		f.exec(`DELETE FROM kernels`)
		rng := newRand(seed)
		ks := randomKernels(rng, 60+rng.IntN(120), 1, 1, 1<<32)
		f.kernels(ks...)
		perKernel, _ := brute(ks, compute)

		type key struct{ stage, name string }
		type sums struct{ total, hidden, byCompute int64 }
		wantSums := map[key]*sums{}
		overlap := map[key]map[string]int64{}
		for _, a := range ks {
			kk := key{a.Stage, fmt.Sprintf("k%d", a.Name)}
			if wantSums[kk] == nil {
				wantSums[kk] = &sums{}
			}
			s := wantSums[kk]
			s.total += a.Dur
			s.hidden += perKernel[a.ID].hidden
			s.byCompute += perKernel[a.ID].byCompute
			for _, b := range ks {
				if a.ID == b.ID || keyOf(a) != keyOf(b) || fmtPtr(a.Stream) == fmtPtr(b.Stream) {
					continue
				}
				ov := min(a.TS+a.Dur, b.TS+b.Dur) - max(a.TS, b.TS)
				if ov > 0 {
					if overlap[kk] == nil {
						overlap[kk] = map[string]int64{}
					}
					overlap[kk][fmt.Sprintf("k%d", b.Name)] += ov
				}
			}
		}
		wantDominant := func(kk key) string {
			best, bestNS := "-", int64(0)
			for other, ns := range overlap[kk] {
				var o, b int
				fmt.Sscanf(other, "k%d", &o)
				fmt.Sscanf(best, "k%d", &b)
				better := ns > bestNS ||
					ns == bestNS && (catRank[randomCategories[o][1]] < catRank[randomCategories[b][1]] ||
						catRank[randomCategories[o][1]] == catRank[randomCategories[b][1]] && other < best)
				if best == "-" || better {
					best, bestNS = other, ns
				}
			}
			return best
		}

		rows, err := OverlapByKernel(ctx, db, OverlapByKernelParams{Run: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(wantSums) {
			t.Fatalf("seed %d: %d rows, want %d", seed, len(rows), len(wantSums))
		}
		for _, r := range rows {
			kk := key{r.Stage, r.Kernel}
			w := wantSums[kk]
			if w == nil || r.TotalNS != w.total || r.HiddenNS != w.hidden || r.HiddenByComp != w.byCompute {
				t.Errorf("seed %d %v: total/hidden/by compute %d %d %d, want %+v", seed, kk, r.TotalNS, r.HiddenNS, r.HiddenByComp, w)
			}
			if d := wantDominant(kk); dominantOrDash(r) != d {
				t.Errorf("seed %d %v: dominant %s, want %s (overlaps %v)", seed, kk, dominantOrDash(r), d, overlap[kk])
			}
		}
		again, err := OverlapByKernel(ctx, db, OverlapByKernelParams{Run: 1})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(again) != fmt.Sprint(rows) {
			t.Errorf("seed %d: two runs differ", seed)
		}
	}
}
