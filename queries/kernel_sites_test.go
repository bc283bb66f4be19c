package queries

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// siteView flattens a KernelSitesRow for comparison.
type siteView struct {
	stage, kernel, match string
	rank                 int64 // 0 = no site
	location             string
	siteNS, kernelNS     int64
	share                float64
	op                   string
	sites, sitedNS       int64
}

func viewSites(rows []KernelSitesRow) []siteView {
	var out []siteView
	for _, r := range rows {
		out = append(out, siteView{r.Stage, r.Kernel, r.Match, r.SiteRank.Int64, r.Location.String,
			r.SiteNS, r.KernelNS, r.SiteSharePct, r.CPUOp.String, r.Sites, r.SitedNS})
	}
	return out
}

func compareSites(t *testing.T, what string, got []KernelSitesRow, want []siteView) {
	t.Helper()
	g := viewSites(got)
	if len(g) != len(want) {
		t.Fatalf("%s: %d rows, want %d:\n%+v", what, len(g), len(want), g)
	}
	for i := range want {
		gg, w := g[i], want[i]
		if gg.share != w.share && !near(gg.share, w.share) {
			t.Errorf("%s row %d: share %v, want %v", what, i, gg.share, w.share)
		}
		gg.share, w.share = 0, 0
		if gg != w {
			t.Errorf("%s row %d:\n got  %+v\n want %+v", what, i, gg, w)
		}
	}
}

// TestKernelSitesSingleTrace: the best two locations by GPU time with their
// shares of the kernel's whole time (unresolved launches included), the
// most frequent CPU op of each, sites with the same location merged, a
// path without a framework-relative form kept whole, and a kernel with no
// site at all.
func TestKernelSitesSingleTrace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(1, "r")
	f.trace(1, 1, 0, "decode", "formal")
	f.name(1, "gemm_k", "gemm_k", "", "gemm", "compute")
	f.name(2, "lonely", "lonely", "", "other", "other")
	f.site(1, "/ws/sglang/python/sglang/srt/layers/linear.py", 10, "forward", "python/sglang/srt/layers/linear.py")
	f.site(2, "/ws/sglang/python/sglang/srt/layers/moe.py", 20, "apply", "python/sglang/srt/layers/moe.py")
	// site 3 is the same location as site 2 under another install prefix
	f.site(3, "/other/python/sglang/srt/layers/moe.py", 20, "apply", "python/sglang/srt/layers/moe.py")
	f.site(4, "/home/me/script.py", 7, "main", "")
	for i, op := range []string{"aten::mm", "aten::mm", "aten::addmm", "aten::bmm", "aten::bmm", "aten::zz"} {
		f.cpuOp(int64(i+1), 1, op)
	}
	f.kernelsOn(0, 7,
		// site 1: 400 ns, ops mm, mm, addmm -> mm is the most frequent
		kernel{ID: 1, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 0, Dur: 100, Site: 1, Op: 1},
		kernel{ID: 2, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 100, Dur: 100, Site: 1, Op: 2},
		kernel{ID: 3, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 200, Dur: 200, Site: 1, Op: 3},
		// sites 2 and 3 = one location: 250 + 250 = 500 ns, ops bmm x2 vs zz
		kernel{ID: 4, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 400, Dur: 250, Site: 2, Op: 4},
		kernel{ID: 5, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 650, Dur: 250, Site: 3, Op: 5},
		kernel{ID: 6, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 900, Dur: 0, Site: 3, Op: 6},
		// site 4: 50 ns, no op -> third, not shown
		kernel{ID: 7, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 900, Dur: 50, Site: 4},
		// unresolved: 50 ns
		kernel{ID: 8, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 950, Dur: 50},
		// a kernel with no site at all
		kernel{ID: 9, Trace: 1, Run: 1, Stage: "decode", Name: 2, TS: 1000, Dur: 30},
	)
	rows, err := KernelSites(context.Background(), f.db, KernelSitesParams{Run: 1})
	if err != nil {
		t.Fatal(err)
	}
	compareSites(t, "single", rows, []siteView{
		{"decode", "gemm_k", "self", 1, "python/sglang/srt/layers/moe.py:20 apply", 500, 1000, 50, "aten::bmm", 3, 950},
		{"decode", "gemm_k", "self", 2, "python/sglang/srt/layers/linear.py:10 forward", 400, 1000, 40, "aten::mm", 3, 950},
		{"decode", "lonely", "self", 0, "", 0, 30, 0, "", 0, 0},
	})
	// The site without a framework-relative path shows its file.
	rows, err = KernelSites(context.Background(), f.db, KernelSitesParams{Run: 1, Stage: stageOnly("prefill")})
	if err != nil || len(rows) != 0 {
		t.Errorf("other stage: %v %v", rows, err)
	}
	f.name(3, "solo", "solo", "", "other", "other")
	f.kernelsOn(0, 7, kernel{ID: 10, Trace: 1, Run: 1, Stage: "decode", Name: 3, TS: 2000, Dur: 10, Site: 4})
	rows, err = KernelSites(context.Background(), f.db, KernelSitesParams{Run: 1, Rank: rankOf(0)})
	if err != nil {
		t.Fatal(err)
	}
	last := rows[len(rows)-1]
	if last.Kernel != "solo" || last.Location.String != "/home/me/script.py:7 main" || last.Sites != 1 || last.CPUOp.Valid {
		t.Errorf("solo: %+v", last)
	}
}

// twoTraceDB is a formal run (1) and a mapping run (2) exercising every
// rule by which a mapping run lends sites (sqllib/scope.sql).
func twoTraceDB(t *testing.T) fixture {
	f := newFixture(t)
	f.run(1, "formal")
	f.run(2, "mapping")
	f.trace(1, 1, 0, "decode", "formal")
	f.trace(2, 2, 0, "decode", "formal")
	f.trace(3, 2, 0, "prefill", "formal")
	f.site(1, "/s/python/sglang/srt/layers/linear.py", 10, "forward", "python/sglang/srt/layers/linear.py")
	f.site(2, "/s/python/sglang/srt/layers/norm.py", 20, "forward", "python/sglang/srt/layers/norm.py")
	f.site(3, "/s/python/sglang/srt/layers/act.py", 30, "forward", "python/sglang/srt/layers/act.py")
	f.site(4, "/s/python/sglang/srt/layers/other.py", 40, "forward", "python/sglang/srt/layers/other.py")
	f.cpuOp(1, 2, "aten::mm")
	f.cpuOp(2, 2, "sgl::rmsnorm")
	// names shared by both runs, and names of one run only
	f.name(1, "gemm_k", "gemm_k", "gemm_k", "gemm", "compute")           // exact in both
	f.name(2, "norm<1>", "norm<1>", "norm", "norm", "elementwise")       // mapping only
	f.name(3, "norm<2>", "norm<2>", "norm", "norm", "elementwise")       // formal only: base unique -> norm<1>
	f.name(4, "act<a>", "act<a>", "act", "activation", "elementwise")    // mapping
	f.name(5, "act<b>", "act<b>", "act", "activation", "elementwise")    // mapping: base "act" ambiguous
	f.name(6, "act<c>", "act<c>", "act", "activation", "elementwise")    // formal: ambiguous -> unmapped
	f.name(7, "prefill_only", "prefill_only", "", "other", "other")      // mapping has it in prefill only
	f.name(8, "gemm_k_variant", "gemm_k_variant", "", "gemm", "compute") // formal: no prefix matching
	f.name(9, "graph_k", "graph_k", "", "other", "other")                // both, but no site in mapping
	f.kernelsOn(0, 7,
		// mapping run (eager): sites and ops; long durations that must never reach the formal table
		kernel{ID: 101, Trace: 2, Run: 2, Stage: "decode", Name: 1, Dur: 9000, Site: 1, Op: 1},
		kernel{ID: 102, Trace: 2, Run: 2, Stage: "decode", Name: 1, TS: 9000, Dur: 1000, Site: 4, Op: 1},
		kernel{ID: 103, Trace: 2, Run: 2, Stage: "decode", Name: 2, TS: 10000, Dur: 9000, Site: 2, Op: 2},
		kernel{ID: 104, Trace: 2, Run: 2, Stage: "decode", Name: 4, TS: 20000, Dur: 9000, Site: 3},
		kernel{ID: 105, Trace: 2, Run: 2, Stage: "decode", Name: 5, TS: 30000, Dur: 9000, Site: 3},
		kernel{ID: 106, Trace: 3, Run: 2, Stage: "prefill", Name: 7, TS: 40000, Dur: 9000, Site: 4},
		kernel{ID: 107, Trace: 2, Run: 2, Stage: "decode", Name: 9, TS: 50000, Dur: 9000},
		// formal run (graphs): no sites of its own
		kernel{ID: 1, Trace: 1, Run: 1, Stage: "decode", Name: 1, Dur: 400},
		kernel{ID: 2, Trace: 1, Run: 1, Stage: "decode", Name: 1, TS: 400, Dur: 100},
		kernel{ID: 3, Trace: 1, Run: 1, Stage: "decode", Name: 3, TS: 500, Dur: 200},
		kernel{ID: 4, Trace: 1, Run: 1, Stage: "decode", Name: 6, TS: 700, Dur: 100},
		kernel{ID: 5, Trace: 1, Run: 1, Stage: "decode", Name: 7, TS: 800, Dur: 50},
		kernel{ID: 6, Trace: 1, Run: 1, Stage: "decode", Name: 8, TS: 850, Dur: 50},
		kernel{ID: 7, Trace: 1, Run: 1, Stage: "decode", Name: 9, TS: 900, Dur: 100},
	)
	return f
}

// TestKernelSitesTwoTrace: exact short name, unique base name, ambiguous
// base name (unmapped), a name present in another stage only (cross-stage:
// the mapping run's site for that name over all its stages), no
// prefix matching, a matched name whose mapping kernels have no site; the
// timing is the formal run's.
func TestKernelSitesTwoTrace(t *testing.T) {
	t.Parallel()
	f := twoTraceDB(t)
	rows, err := KernelSites(context.Background(), f.db, KernelSitesParams{Run: 1, Mapping: rankOf(2)})
	if err != nil {
		t.Fatal(err)
	}
	compareSites(t, "two-trace", rows, []siteView{
		{"decode", "act<c>", "unmapped", 0, "", 0, 100, 0, "", 0, 0},
		// dominant site only (site 1 has 9000 of the mapping's 10000 ns)
		{"decode", "gemm_k", "exact", 1, "python/sglang/srt/layers/linear.py:10 forward", 500, 500, 100, "aten::mm", 1, 500},
		{"decode", "gemm_k_variant", "unmapped", 0, "", 0, 50, 0, "", 0, 0},
		{"decode", "graph_k", "exact", 0, "", 0, 100, 0, "", 0, 0},
		{"decode", "norm<2>", "base", 1, "python/sglang/srt/layers/norm.py:20 forward", 200, 200, 100, "sgl::rmsnorm", 1, 200},
		{"decode", "prefill_only", "cross-stage", 1, "python/sglang/srt/layers/other.py:40 forward", 50, 50, 100, "", 1, 50},
	})
}

// TestTriageCoverage: mapping coverage is the formal kernel time that got a
// site, split by match kind; attribution coverage in single-trace mode.
func TestTriageCoverage(t *testing.T) {
	t.Parallel()
	f := twoTraceDB(t)
	ctx := context.Background()
	rows, err := TriageCoverage(ctx, f.db, TriageCoverageParams{Run: 1, Mapping: rankOf(2)})
	if err != nil {
		t.Fatal(err)
	}
	// formal total 1000: exact gemm_k 500 + graph_k 100 (no site),
	// cross-stage prefill_only 50 (its prefill site), base norm<2> 200,
	// unmapped act<c> 100 + variant 50
	want := []TriageCoverageRow{
		{Stage: sql.NullString{String: "decode", Valid: true}, KernelNS: 1000, SitedNS: 750, ExactNS: 600, CrossStageNS: 50, BaseNS: 200, UnmappedNS: 150, CoveragePct: 75},
		{KernelNS: 1000, SitedNS: 750, ExactNS: 600, CrossStageNS: 50, BaseNS: 200, UnmappedNS: 150, CoveragePct: 75},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("two-trace coverage:\n got  %+v\n want %+v", rows, want)
	}
	// Single-trace on the mapping run: every kernel but graph_k has a site.
	rows, err = TriageCoverage(ctx, f.db, TriageCoverageParams{Run: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Stage.String != "prefill" || rows[0].CoveragePct != 100 ||
		rows[1].Stage.String != "decode" || rows[1].KernelNS != 46000 || rows[1].SitedNS != 37000 ||
		rows[2].Stage.Valid || rows[2].KernelNS != 55000 || rows[2].SitedNS != 46000 || rows[2].ExactNS != 0 {
		t.Errorf("single-trace coverage: %+v", rows)
	}
}

// TestKernelSitesAgreeWithKernelScope: kernel_sites.sql and
// triage_coverage.sql apply kernel_scope's rule to aggregated groups for
// speed; here the same figures are computed per kernel through the
// kernel_scope macro itself, on every demo run in single-trace mode and on
// two-trace pairs (the real pair, and a pair of different frameworks where
// most names stay unmapped), for rank 0, rank 1 and every rank.
func TestKernelSitesAgreeWithKernelScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := demoDB(t)
	runs := demoRuns(t, db)
	type pair struct {
		run     int64
		mapping sql.NullInt64
		ranks   bool // rank 0 and rank 1 alone as well as every rank
	}
	var cases []pair
	for label, id := range runs {
		cases = append(cases, pair{id, sql.NullInt64{}, label == "sglang-llama"})
	}
	cases = append(cases,
		pair{runs["sglang-formal"], rankOf(runs["sglang-mapping"]), true},
		pair{runs["tokenspeed-deepseek"], rankOf(runs["sglang-llama"]), false})
	for _, c := range cases {
		t.Run(fmt.Sprintf("run %d mapping %d", c.run, c.mapping.Int64), func(t *testing.T) {
			t.Parallel()
			// a run of one rank: rank 1 has no rows and every rank is
			// rank 0's rows, so rank 0 alone. Of a run of two, each rank
			// alone on sglang-llama and the real pair only: six changes to
			// the rank filters of kernel_sites.sql and
			// triage_coverage.sql each failed every case of two ranks alike.
			var ranks int
			if err := db.QueryRow(`SELECT count(DISTINCT rank) FROM kernels WHERE run_id = ?`, c.run).Scan(&ranks); err != nil {
				t.Fatal(err)
			}
			passes := []sql.NullInt64{{}}
			switch {
			case ranks == 1:
				passes = []sql.NullInt64{rankOf(0)}
			case c.ranks:
				passes = []sql.NullInt64{rankOf(0), rankOf(1), {}}
			}
			for _, rank := range passes {
				what := fmt.Sprintf("run %d mapping %v rank %v", c.run, c.mapping, rank)
				// Per (stage, short name): total, sited, match; per location: ns.
				rows, err := db.Query(`
					SELECT k.stage, n.short_name, ks.match, s.site_id IS NOT NULL,
					       CASE WHEN ks.match = 'graph-replay' THEN 'graph replay @ ' ELSE '' END ||
					       CASE WHEN s.line IS NOT NULL AND coalesce(s.rel_path, s.file) IS NOT NULL
					            THEN coalesce(s.rel_path, s.file) || ':' || s.line || coalesce(' ' || s.func, '')
					            ELSE s.name END,
					       k.dur_ns
					FROM kernel_scope(?, ?) ks
					JOIN kernels k USING (kernel_id)
					JOIN kernel_names n ON n.name_id = k.name_id
					LEFT JOIN sites s ON s.site_id = ks.site_id
					WHERE ? IS NULL OR k.rank = ?`, c.run, c.mapping, rank, rank)
				if err != nil {
					t.Fatal(err)
				}
				type key struct{ stage, kernel string }
				total, sited := map[key]int64{}, map[key]int64{}
				match := map[key]string{}
				byLoc := map[key]map[string]int64{}
				stageTotal, stageSited := map[string]int64{}, map[string]int64{}
				for rows.Next() {
					var k key
					var m string
					var has bool
					var loc sql.NullString
					var dur int64
					if err := rows.Scan(&k.stage, &k.kernel, &m, &has, &loc, &dur); err != nil {
						t.Fatal(err)
					}
					total[k] += dur
					stageTotal[k.stage] += dur
					if match[k] != "graph-replay" { // any replayed time marks the name
						match[k] = m
					}
					if has {
						sited[k] += dur
						if m != "graph-replay" { // coverage counts kernel sites only
							stageSited[k.stage] += dur
						}
						if byLoc[k] == nil {
							byLoc[k] = map[string]int64{}
						}
						byLoc[k][loc.String] += dur
					}
				}
				rows.Close()
				got, err := KernelSites(ctx, db, KernelSitesParams{Run: c.run, Mapping: c.mapping, Rank: rank})
				if err != nil {
					t.Fatal(err)
				}
				seen := map[key]bool{}
				for _, r := range got {
					k := key{r.Stage, r.Kernel}
					seen[k] = true
					if r.KernelNS != total[k] || r.SitedNS != sited[k] || r.Match != match[k] || r.Sites != int64(len(byLoc[k])) {
						t.Errorf("%s %v: got kernel %d sited %d match %s sites %d; kernel_scope says %d %d %s %d",
							what, k, r.KernelNS, r.SitedNS, r.Match, r.Sites, total[k], sited[k], match[k], len(byLoc[k]))
					}
					if r.Location.Valid && r.SiteNS != byLoc[k][r.Location.String] {
						t.Errorf("%s %v %s: %d ns, kernel_scope says %d", what, k, r.Location.String, r.SiteNS, byLoc[k][r.Location.String])
					}
				}
				if len(seen) != len(total) {
					t.Errorf("%s: %d names, kernel_scope has %d", what, len(seen), len(total))
				}
				cov, err := TriageCoverage(ctx, db, TriageCoverageParams{Run: c.run, Mapping: c.mapping, Rank: rank})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range cov {
					if r.Stage.Valid && (r.KernelNS != stageTotal[r.Stage.String] || r.SitedNS != stageSited[r.Stage.String]) {
						t.Errorf("%s %s coverage: %d/%d, kernel_scope says %d/%d", what, r.Stage.String,
							r.SitedNS, r.KernelNS, stageSited[r.Stage.String], stageTotal[r.Stage.String])
					}
				}
			}
		})
	}
}
