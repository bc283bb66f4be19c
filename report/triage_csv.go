package report

import (
	"regexp"
	"strconv"
	"strings"
)

// The CSV view of a triage report: machine-readable tables.

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// CSVTables are the report as machine-readable tables, one file each with
// --out DIR: exact nanoseconds and unrounded shares, no units in cells.
// Names are `<run>.<table>` and `<run>.<stage>.<table>`.
func (r *TriageReport) CSVTables() []*Table {
	prefix := unsafeFileChars.ReplaceAllString(r.Run, "_")
	ff := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	traces := &Table{Name: prefix + ".traces", Columns: cols("run", "path", "rank", "stage", "role", "gpu_events")}
	for _, t := range r.Traces {
		traces.Rows = append(traces.Rows, []string{t.Run, t.Path, i64(t.Rank), t.Stage, t.Role, i64(t.GPUEvents)})
	}
	events := &Table{Name: prefix + ".gpu_events", Columns: cols("stage", "rank", "events")}
	for _, g := range r.GPUEvents {
		events.Rows = append(events.Rows, []string{g.Stage, i64(g.Rank), i64(g.Events)})
	}
	stages := &Table{Name: prefix + ".stages", Columns: cols("stage", "rank", "gpu_events", "kernel_time_ns",
		"busy_time_ns", "window_ns", "streams", "sited_time_ns", "coverage_pct", "exact_time_ns", "cross_stage_time_ns", "base_time_ns", "unmapped_time_ns", "graph_replay_time_ns")}
	out := []*Table{traces, events, stages}
	for _, st := range r.Stages {
		rank := "all"
		if st.Rank != nil {
			rank = i64(*st.Rank)
		}
		c := st.Coverage
		stages.Rows = append(stages.Rows, []string{st.Stage, rank, i64(st.Totals.GPUEvents), i64(st.Totals.KernelTimeNS),
			i64(st.Totals.BusyTimeNS), i64(st.Totals.WindowNS), i64(st.Totals.Streams), i64(c.SitedTimeNS),
			ff(c.CoveragePct), i64(c.ExactTimeNS), i64(c.CrossStageTimeNS), i64(c.BaseTimeNS), i64(c.UnmappedNS),
			i64(c.ReplayTimeNS)})
		sp := prefix + "." + unsafeFileChars.ReplaceAllString(st.Stage, "_")
		fam := &Table{Name: sp + ".families", Columns: cols("family", "gpu_time_ns", "share_pct", "launches")}
		for _, f := range st.Families {
			fam.Rows = append(fam.Rows, []string{f.Family, i64(f.GPUTimeNS), ff(f.SharePct), i64(f.Launches)})
		}
		kt := &Table{Name: sp + ".kernels", Columns: cols("kernel", "family", "category", "gpu_time_ns", "share_pct",
			"launches", "avg_ns", "rank_min_ns", "rank_median_ns", "rank_max_ns", "location_status",
			"site1", "site1_share_pct", "site1_cpu_op", "site2", "site2_share_pct", "site2_cpu_op",
			"min_ns", "median_ns", "p90_ns", "max_ns", "stddev_ns",
			"launched", "launch_bound", "short", "delay_p50_ns", "delay_p90_ns", "delay_max_ns", "launch_call_p50_ns",
			"launch_call_max_ns")}
		for _, k := range st.Kernels {
			row := []string{k.Kernel, k.Family, k.Category, i64(k.GPUTimeNS), ff(k.SharePct), i64(k.Launches),
				ff(k.AvgUS * 1000), "", "", ""}
			if k.RankSpread != nil {
				row[7], row[8], row[9] = ff(k.RankSpread.MinUS*1000), ff(k.RankSpread.MedianUS*1000), ff(k.RankSpread.MaxUS*1000)
			}
			row = append(row, k.Location)
			for i := 0; i < 2; i++ {
				if i < len(k.Sites) {
					op := ""
					if k.Sites[i].CPUOp != nil {
						op = *k.Sites[i].CPUOp
					}
					row = append(row, k.Sites[i].Location, ff(k.Sites[i].SiteSharePct), op)
				} else {
					row = append(row, "", "", "")
				}
			}
			row = append(row, spreadCSV(k.Spread)...)
			row = append(row, launchCSV(k.Launch)...)
			kt.Rows = append(kt.Rows, row)
		}
		ov := &Table{Name: sp + ".overlap", Columns: cols("priority", "verdict", "kernel", "scope", "scope_match",
			"family", "category", "launches", "total_ns", "hidden_ns", "hidden_by_compute_ns", "exclusive_ns",
			"stage_busy_ns", "busy_share_pct", "exclusive_pct", "hidden_pct", "dominant", "dep_risk", "recommendation",
			"known_paths")}
		for _, o := range st.Overlap {
			dom := ""
			if o.Dominant != nil {
				dom = *o.Dominant
			}
			ov.Rows = append(ov.Rows, []string{o.Priority, o.Verdict, o.Kernel, o.Scope, o.ScopeMatch, o.Family,
				o.Category, i64(o.Launches), i64(o.TotalNS), i64(o.HiddenNS), i64(o.HiddenByCompNS), i64(o.ExclusiveNS),
				i64(o.StageBusyNS), ff(o.BusySharePct), ff(o.ExclusivePct), ff(o.HiddenPct), dom, o.DepRisk, o.Recommendation,
				strings.Join(o.KnownPaths, "; ")})
		}
		fu := &Table{Name: sp + ".fusions", Columns: cols("id", "pattern", "status", "confidence", "related_ns",
			"share_pct", "occurrences", "evidence", "locations", "fused_path", "rationale")}
		for _, f := range st.Fusions {
			fu.Rows = append(fu.Rows, []string{f.ID, f.Pattern, f.Status, f.Confidence, i64(f.RelatedNS), ff(f.SharePct),
				i64(f.Occurrences), strings.Join(f.EvidenceKernels, "; "), strings.Join(f.Locations, "; "), f.FusedPath, f.Rationale})
		}
		out = append(out, fam, kt, ov, fu)
		out = append(out, idleCSV(sp, &st)...)
		out = append(out, stragglerCSV(sp, &st)...)
	}
	return out
}

func cols(names ...string) []Column {
	out := make([]Column, len(names))
	for i, n := range names {
		out[i] = Column{Name: n}
	}
	return out
}
