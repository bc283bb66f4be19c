package queries

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
)

// TestMappingAcrossStages reproduces the field case of issue 9: an eager
// mapping run captured on prefill only and a graph formal run on decode.
// Matching by name within a stage gave 0% coverage; with the cross-stage
// fallback every formal decode kernel whose short name the mapping prefill
// has (with a site) is covered. The expected coverage is computed here by
// brute force from the stored rows, not by the query under test.
func TestMappingAcrossStages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mapping, _ := filepath.Glob("../testdata/demo/sglang-mapping/*/*-TP-0-EXTEND.trace.json.gz")
	formal, _ := filepath.Glob("../testdata/demo/sglang-formal/*/*-TP-0-DECODE.trace.json.gz")
	if len(mapping) != 1 || len(formal) != 1 {
		t.Fatalf("demo files: %v %v", mapping, formal)
	}
	for _, c := range []struct {
		path, run, role string
	}{{mapping[0], "map", "mapping"}, {formal[0], "formal", "formal"}} {
		res, err := ingest.Ingest(ctx, w, []string{c.path}, ingest.Options{Run: c.run, Role: c.role, Jobs: 1})
		if err != nil || res.Failed() != 0 {
			t.Fatalf("ingest %s: %v", c.path, err)
		}
	}
	var mapRun, formalRun int64
	if err := w.DB.QueryRow(`SELECT (SELECT run_id FROM runs WHERE label = 'map'), (SELECT run_id FROM runs WHERE label = 'formal')`).Scan(&mapRun, &formalRun); err != nil {
		t.Fatal(err)
	}

	// Brute force: short names with a site in the mapping run, any stage.
	sited := map[string]bool{}
	rows, err := w.DB.Query(`SELECT n.short_name, k.stage FROM kernels k JOIN kernel_names n USING (name_id)
		WHERE k.run_id = ? AND k.site_id IS NOT NULL`, mapRun)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, stage string
		if err := rows.Scan(&name, &stage); err != nil {
			t.Fatal(err)
		}
		if stage == "decode" {
			t.Fatalf("fixture: the mapping run has a decode kernel %s", name)
		}
		sited[name] = true
	}
	rows.Close()
	var total, covered int64
	rows, err = w.DB.Query(`SELECT n.short_name, k.stage, k.dur_ns FROM kernels k JOIN kernel_names n USING (name_id) WHERE k.run_id = ?`, formalRun)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, stage string
		var dur int64
		if err := rows.Scan(&name, &stage, &dur); err != nil {
			t.Fatal(err)
		}
		if stage != "decode" {
			t.Fatalf("fixture: the formal run has a %s kernel", stage)
		}
		total += dur
		if sited[name] {
			covered += dur
		}
	}
	rows.Close()
	if covered == 0 || covered == total {
		t.Fatalf("fixture: covered %d of %d ns; want a partial cover", covered, total)
	}

	cov, err := TriageCoverage(ctx, w.DB, TriageCoverageParams{Run: formalRun, Mapping: sql.NullInt64{Int64: mapRun, Valid: true}})
	if err != nil {
		t.Fatal(err)
	}
	all := cov[len(cov)-1]
	if all.KernelNS != total || all.SitedNS < covered || all.ExactNS != 0 || all.CrossStageNS < covered {
		t.Errorf("coverage %+v: want kernel %d, at least %d sited and cross-stage, nothing same-stage", all, total, covered)
	}
	// Everything sited beyond the exact-name cover came from a unique
	// template-stripped name in the other stage.
	if extra := all.SitedNS - covered; extra != all.CrossStageNS-covered {
		t.Errorf("sited beyond exact cross-stage names: %d, cross-stage beyond them: %d", extra, all.CrossStageNS-covered)
	}
}

// TestGraphReplaySites: in single-trace mode a kernel replayed by a CUDA
// graph (no launch site of its own) is located at the Python frame around
// its cudaGraphLaunch, marked as a replay. The frame is read here straight
// from the graph launches' rows.
func TestGraphReplaySites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	formal, _ := filepath.Glob("../testdata/demo/sglang-formal/*/*-TP-0-DECODE.trace.json.gz")
	if len(formal) != 1 {
		t.Fatalf("demo files: %v", formal)
	}
	if res, err := ingest.Ingest(ctx, w, formal, ingest.Options{Run: "graphs", Jobs: 1}); err != nil || res.Failed() != 0 {
		t.Fatalf("ingest: %v", err)
	}
	var want string
	var frames, replayed int
	err = w.DB.QueryRow(`SELECT any_value(s.rel_path || ':' || s.line || ' ' || s.func), count(DISTINCT l.site_id), count(*)
		FROM kernels k JOIN launches l ON l.launch_id = k.launch_id JOIN sites s ON s.site_id = l.site_id
		WHERE k.graph_launch AND k.site_id IS NULL`).Scan(&want, &frames, &replayed)
	if err != nil {
		t.Fatal(err)
	}
	if frames != 1 || replayed == 0 {
		t.Fatalf("fixture: %d replayed kernels under %d graph-launch frames, want one frame", replayed, frames)
	}
	rows, err := KernelSites(ctx, w.DB, KernelSitesParams{Run: 1})
	if err != nil {
		t.Fatal(err)
	}
	var seen int
	for _, r := range rows {
		if r.Stage != "decode" || !r.Replay {
			continue
		}
		seen++
		if r.Match != "graph-replay" || r.Location.String != "graph replay @ "+want || r.SitedNS != r.KernelNS {
			t.Errorf("%s: match %s location %q sited %d of %d", r.Kernel, r.Match, r.Location.String, r.SitedNS, r.KernelNS)
		}
	}
	if seen == 0 {
		t.Error("no decode kernel located by its graph launch")
	}
	cov, err := TriageCoverage(ctx, w.DB, TriageCoverageParams{Run: 1})
	if err != nil {
		t.Fatal(err)
	}
	var replayNS int64
	if err := w.DB.QueryRow(`SELECT sum(k.dur_ns) FROM kernels k JOIN launches l ON l.launch_id = k.launch_id
		WHERE k.graph_launch AND k.site_id IS NULL AND l.site_id IS NOT NULL`).Scan(&replayNS); err != nil {
		t.Fatal(err)
	}
	var ownNS int64
	if err := w.DB.QueryRow(`SELECT coalesce(sum(dur_ns), 0) FROM kernels WHERE site_id IS NOT NULL`).Scan(&ownNS); err != nil {
		t.Fatal(err)
	}
	if all := cov[len(cov)-1]; all.ReplayNS != replayNS || all.SitedNS != ownNS {
		t.Errorf("coverage %+v: want %d ns of graph replays and %d ns with a site of their own", all, replayNS, ownNS)
	}
}
