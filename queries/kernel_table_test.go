package queries

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/synth"
)

var (
	demoOnce sync.Once
	demoWH   *schema.Warehouse
	demoErr  error
)

// demoDB is testdata/demo, ingested once for every test of the package
// that needs real traces and opened read-only: those tests only read it.
func demoDB(t *testing.T) *sql.DB {
	t.Helper()
	path := demoTemplate(t)
	demoOnce.Do(func() {
		// one thread, as schematest.Open's copies
		demoWH, demoErr = schema.Open(context.Background(), path, schema.Options{ReadOnly: true, Threads: 1})
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoWH.DB
}

// demoRuns lists the demo's runs by label.
func demoRuns(t *testing.T, db *sql.DB) map[string]int64 {
	t.Helper()
	rows, err := db.Query(`SELECT label, run_id FROM runs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var l string
		var id int64
		if err := rows.Scan(&l, &id); err != nil {
			t.Fatal(err)
		}
		out[l] = id
	}
	return out
}

// rawKernel is one GPU event read back from the warehouse, unaggregated.
type rawKernel struct {
	stage, short string
	rank, dur    int64
}

func readRawKernels(t *testing.T, db *sql.DB, run int64) []rawKernel {
	t.Helper()
	rows, err := db.Query(`SELECT k.stage, n.short_name, k.rank, k.dur_ns
		FROM kernels k JOIN kernel_names n USING (name_id) WHERE k.run_id = ?`, run)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []rawKernel
	for rows.Next() {
		var r rawKernel
		if err := rows.Scan(&r.stage, &r.short, &r.rank, &r.dur); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func stageOrder(s string) int {
	switch s {
	case "prefill":
		return 0
	case "decode":
		return 1
	case "mixed":
		return 2
	case "unknown":
		return 3
	}
	return 4
}

// expectKernelTable computes the kernel table in Go from unaggregated rows:
// the independent side of TestKernelTableDemo.
func expectKernelTable(raw []rawKernel, rank sql.NullInt64) []KernelTableRow {
	type key struct{ stage, short string }
	gpu := map[key]int64{}
	launches := map[key]int64{}
	perRank := map[key]map[int64]int64{}
	stageNS := map[string]int64{}
	stageRanks := map[string]map[int64]bool{}
	for _, k := range raw {
		if rank.Valid && k.rank != rank.Int64 {
			continue
		}
		kk := key{k.stage, k.short}
		gpu[kk] += k.dur
		launches[kk]++
		if perRank[kk] == nil {
			perRank[kk] = map[int64]int64{}
		}
		perRank[kk][k.rank] += k.dur
		stageNS[k.stage] += k.dur
		if stageRanks[k.stage] == nil {
			stageRanks[k.stage] = map[int64]bool{}
		}
		stageRanks[k.stage][k.rank] = true
	}
	var out []KernelTableRow
	for kk, ns := range gpu {
		r := KernelTableRow{Stage: kk.stage, Kernel: kk.short, GPUNS: ns, Launches: launches[kk],
			AvgNS: float64(ns) / float64(launches[kk]), StageKernelNS: stageNS[kk.stage]}
		if stageNS[kk.stage] > 0 {
			r.SharePct = float64(ns) / float64(stageNS[kk.stage]) * 100
		}
		var per []int64
		for rk := range stageRanks[kk.stage] {
			per = append(per, perRank[kk][rk])
		}
		slices.Sort(per)
		r.Ranks = int64(len(per))
		r.RankMinNS, r.RankMaxNS = per[0], per[len(per)-1]
		if len(per)%2 == 1 {
			r.RankMedianNS = float64(per[len(per)/2])
		} else {
			r.RankMedianNS = float64(per[len(per)/2-1]+per[len(per)/2]) / 2
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if stageOrder(a.Stage) != stageOrder(b.Stage) {
			return stageOrder(a.Stage) < stageOrder(b.Stage)
		}
		if a.Stage != b.Stage {
			return a.Stage < b.Stage
		}
		if a.GPUNS != b.GPUNS {
			return a.GPUNS > b.GPUNS
		}
		return a.Kernel < b.Kernel
	})
	return out
}

// TestKernelTableDemo checks GPU time, launches, share, average and rank
// spread of every kernel row of every demo run, for rank 0 and all ranks,
// against sums computed here over the unaggregated kernels, and each
// stage's totals against the generator's manifest (counted while writing
// the traces, not parsed back).
func TestKernelTableDemo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := demoDB(t)
	m, err := synth.ReadManifest("../testdata/demo/MANIFEST.json")
	if err != nil {
		t.Fatal(err)
	}
	runs := demoRuns(t, db)
	if len(runs) != 6 {
		t.Fatalf("demo has %d runs, want 6", len(runs))
	}
	for label, run := range runs {
		raw := readRawKernels(t, db, run)
		for _, rank := range []sql.NullInt64{rankOf(0), {}} {
			got, err := KernelTable(ctx, db, KernelTableParams{Run: run, Rank: rank, MinShare: 0})
			if err != nil {
				t.Fatal(err)
			}
			want := expectKernelTable(raw, rank)
			if len(got) != len(want) {
				t.Fatalf("%s rank %v: %d rows, want %d", label, rank, len(got), len(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.Stage != w.Stage || g.Kernel != w.Kernel || g.GPUNS != w.GPUNS || g.Launches != w.Launches ||
					g.StageKernelNS != w.StageKernelNS || !near(g.SharePct, w.SharePct) || !near(g.AvgNS, w.AvgNS) ||
					g.RankMinNS != w.RankMinNS || g.RankMaxNS != w.RankMaxNS || !near(g.RankMedianNS, w.RankMedianNS) ||
					g.Ranks != w.Ranks || !g.Shown {
					t.Errorf("%s rank %v row %d:\n got  %+v\n want %+v", label, rank, i, g, w)
				}
				if g.Family == "" || g.Family == "unclassified" || g.Category == "" {
					t.Errorf("%s: %s has family %q category %q", label, g.Kernel, g.Family, g.Category)
				}
			}
			// Stage totals and launches against the manifest.
			wantNS, wantN := map[string]int64{}, map[string]int64{}
			for _, f := range m.Files {
				if strings.Split(filepath.ToSlash(f.Path), "/")[0] != label || (rank.Valid && int64(f.Rank) != rank.Int64) {
					continue
				}
				for st, tot := range f.StageGPU {
					wantNS[st] += tot.DurNS
					wantN[st] += tot.Count
				}
			}
			gotNS, gotN := map[string]int64{}, map[string]int64{}
			for _, r := range got {
				gotNS[r.Stage] = r.StageKernelNS
				gotN[r.Stage] += r.Launches
			}
			for st := range wantNS {
				if wantN[st] == 0 {
					continue
				}
				if gotNS[st] != wantNS[st] || gotN[st] != wantN[st] {
					t.Errorf("%s rank %v stage %s: %d ns / %d launches, manifest %d ns / %d",
						label, rank, st, gotNS[st], gotN[st], wantNS[st], wantN[st])
				}
			}
			if len(gotNS) != len(wantNS) {
				t.Errorf("%s rank %v: stages %v, manifest %v", label, rank, gotNS, wantNS)
			}
		}
	}
}

// TestKernelTableMinShare pins the filter at its edges: a row exactly at
// the bar is shown, and every row comes back (Shown false below the bar)
// so the report can count what it hid.
func TestKernelTableMinShare(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(1, "r")
	f.trace(1, 1, 0, "decode", "formal")
	f.name(1, "a", "a", "", "gemm", "compute")
	f.name(2, "b", "b", "", "attention", "compute")
	f.name(3, "c", "c", "", "norm", "elementwise")
	f.name(4, "d", "d", "", "memset", "memory")
	f.name(5, "e", "e", "", "norm", "elementwise")
	// a 600, b 300, c 45 + 45 = 90, d 5 + 5 = 10 -> 60 / 30 / 9 / 1 %; e is
	// zero-length (kept, 0 %).
	f.kernelsOn(0, 7,
		kernel{ID: 1, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 0, Dur: 600},
		kernel{ID: 2, Trace: 1, Run: 1, Stage: "decode", Name: 2, TS: 600, Dur: 300},
		kernel{ID: 3, Trace: 1, Run: 1, Stage: "decode", Name: 3, TS: 900, Dur: 45},
		kernel{ID: 4, Trace: 1, Run: 1, Stage: "decode", Name: 3, TS: 950, Dur: 45},
		kernel{ID: 5, Trace: 1, Run: 1, Stage: "decode", Name: 4, TS: 1000, Dur: 5},
		kernel{ID: 6, Trace: 1, Run: 1, Stage: "decode", Name: 4, TS: 1010, Dur: 5},
		kernel{ID: 7, Trace: 1, Run: 1, Stage: "decode", Name: 5, TS: 1020, Dur: 0},
	)
	for _, c := range []struct {
		min    float64
		shown  []string
		hidden [2]int64 // rows and ns the filter hides
	}{
		{0, []string{"a", "b", "c", "d", "e"}, [2]int64{0, 0}},
		{1.0, []string{"a", "b", "c", "d"}, [2]int64{1, 0}},
		{9.5, []string{"a", "b"}, [2]int64{3, 100}},
		{61, nil, [2]int64{5, 1000}},
	} {
		rows, err := KernelTable(context.Background(), f.db, KernelTableParams{Run: 1, Rank: rankOf(0), MinShare: c.min})
		if err != nil {
			t.Fatal(err)
		}
		var all, shown []string
		for _, r := range rows {
			all = append(all, r.Kernel)
			if r.Shown {
				shown = append(shown, r.Kernel)
			}
		}
		if !slices.Equal(all, []string{"a", "b", "c", "d", "e"}) || !slices.Equal(shown, c.shown) {
			t.Errorf("min %.1f: rows %v shown %v, want all five and %v", c.min, all, shown, c.shown)
		}
		want := map[string][3]float64{"a": {600, 1, 60}, "b": {300, 1, 30}, "c": {90, 2, 9}, "d": {10, 2, 1}, "e": {0, 1, 0}}
		for _, r := range rows {
			w := want[r.Kernel]
			if float64(r.GPUNS) != w[0] || float64(r.Launches) != w[1] || !near(r.SharePct, w[2]) || r.StageKernelNS != 1000 {
				t.Errorf("min %.1f: %+v, want gpu %v launches %v share %v of 1000", c.min, r, w[0], w[1], w[2])
			}
			if r.StageHiddenRows != c.hidden[0] || r.StageHiddenNS != c.hidden[1] {
				t.Errorf("min %.1f: %s: hidden %d rows %d ns, want %v", c.min, r.Kernel, r.StageHiddenRows, r.StageHiddenNS, c.hidden)
			}
		}
	}
}

// TestKernelTableRankSpread checks min/median/max across two ranks, a
// kernel missing on one rank (it counts 0 there), the family of a short
// name shared by two raw names (the one with more time wins), and name
// order on equal times.
func TestKernelTableRankSpread(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(1, "r")
	f.trace(1, 1, 0, "prefill", "formal")
	f.trace(2, 1, 1, "prefill", "formal")
	f.name(1, "x<1>", "x", "", "gemm", "compute")
	f.name(2, "x<2>", "x", "", "other", "other") // same short name, less time
	f.name(3, "y", "y", "", "norm", "elementwise")
	f.name(4, "z", "z", "", "rope", "elementwise")
	f.kernelsOn(0, 7,
		// x: rank 0 = 3000 (2000 + 1000), rank 1 = 5000
		kernel{ID: 1, Trace: 1, Run: 1, Rank: 0, Stage: "prefill", Name: 1, Dur: 2000},
		kernel{ID: 2, Trace: 1, Run: 1, Rank: 0, Stage: "prefill", Name: 2, TS: 3000, Dur: 1000},
		kernel{ID: 3, Trace: 2, Run: 1, Rank: 1, Stage: "prefill", Name: 1, Dur: 5000},
		// y: only rank 0, 2000
		kernel{ID: 4, Trace: 1, Run: 1, Rank: 0, Stage: "prefill", Name: 3, TS: 5000, Dur: 2000},
		// z: 2000 on rank 1 -> ties with y at 2000, sorted by name
		kernel{ID: 5, Trace: 2, Run: 1, Rank: 1, Stage: "prefill", Name: 4, TS: 6000, Dur: 2000},
	)
	rows, err := KernelTable(context.Background(), f.db, KernelTableParams{Run: 1, MinShare: 1})
	if err != nil {
		t.Fatal(err)
	}
	type spread struct {
		kernel, family string
		gpu, min       int64
		median         float64
		max, ranks     int64
	}
	want := []spread{
		{"x", "gemm", 8000, 3000, 4000, 5000, 2},
		{"y", "norm", 2000, 0, 1000, 2000, 2},
		{"z", "rope", 2000, 0, 1000, 2000, 2},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		r := rows[i]
		got := spread{r.Kernel, r.Family, r.GPUNS, r.RankMinNS, r.RankMedianNS, r.RankMaxNS, r.Ranks}
		if got != w {
			t.Errorf("row %d: %+v, want %+v", i, got, w)
		}
	}
	// One rank: the spread collapses to that rank, shares use its total.
	rows, err = KernelTable(context.Background(), f.db, KernelTableParams{Run: 1, Rank: rankOf(1), MinShare: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Kernel != "x" || rows[0].GPUNS != 5000 || rows[0].StageKernelNS != 7000 ||
		rows[0].RankMinNS != 5000 || rows[0].Ranks != 1 || rows[1].Kernel != "z" {
		t.Errorf("rank 1: %+v", rows)
	}
}

// TestFamilyRollup checks the roll-up equals the kernel table summed by
// family on every demo run, with shares of the same denominator.
func TestFamilyRollup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := demoDB(t)
	for label, run := range demoRuns(t, db) {
		for _, rank := range []sql.NullInt64{rankOf(0), {}} {
			kt, err := KernelTable(ctx, db, KernelTableParams{Run: run, Rank: rank})
			if err != nil {
				t.Fatal(err)
			}
			fam, err := FamilyRollup(ctx, db, FamilyRollupParams{Run: run, Rank: rank})
			if err != nil {
				t.Fatal(err)
			}
			type key struct{ stage, family string }
			want := map[key]int64{}
			stageNS := map[string]int64{}
			for _, r := range kt {
				want[key{r.Stage, r.Family}] += r.GPUNS
				stageNS[r.Stage] = r.StageKernelNS
			}
			if len(fam) != len(want) {
				t.Errorf("%s: %d families, want %d", label, len(fam), len(want))
			}
			sums := map[string]float64{}
			for i, r := range fam {
				w := want[key{r.Stage, r.Family}]
				if r.GPUNS != w || r.StageKernelNS != stageNS[r.Stage] ||
					!near(r.SharePct, float64(w)*100/float64(stageNS[r.Stage])) {
					t.Errorf("%s %s %s: %+v, want %d ns of %d", label, r.Stage, r.Family, r, w, stageNS[r.Stage])
				}
				if i > 0 && fam[i-1].Stage == r.Stage && fam[i-1].GPUNS < r.GPUNS {
					t.Errorf("%s: families not sorted by time: %v", label, fam)
				}
				sums[r.Stage] += r.SharePct
			}
			for st, s := range sums {
				if s < 100-1e-6 || s > 100+1e-6 {
					t.Errorf("%s %s: family shares sum to %v%%", label, st, s)
				}
			}
		}
	}
}
