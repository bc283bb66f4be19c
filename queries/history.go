package queries

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
)

// History metrics (history_steps.sql's $metric).
const (
	MetricStepTime    = "step_time"
	MetricBusy        = "busy"
	MetricExposedComm = "exposed_comm"
	// MetricIdle is the step time minus busy time; the others of its kind
	// are the idle time of one cause (sqllib/idle.sql).
	MetricIdle              = "idle"
	MetricIdleHostBound     = "idle_host_bound"
	MetricIdleLaunchLatency = "idle_launch_latency"
	MetricIdleSync          = "idle_sync"
	MetricIdleGraphInternal = "idle_graph_internal"
	MetricIdleOther         = "idle_other"
)

// HistoryMetrics lists the accepted metrics.
var HistoryMetrics = []string{MetricStepTime, MetricBusy, MetricExposedComm, MetricIdle, MetricIdleHostBound,
	MetricIdleLaunchLatency, MetricIdleSync, MetricIdleGraphInternal, MetricIdleOther}

// HistoryStepsParams selects one history series over some runs.
type HistoryStepsParams struct {
	Runs []int64
	// FreshRuns are those of Runs whose saved step aggregates are current
	// (StepsFresh): read from the stores; the others are computed, one
	// query each.
	FreshRuns []int64
	Stage     sql.NullString // invalid = every stage
	Rank      int64
	KeepEdges bool
	// Metric is one of HistoryMetrics, or invalid for a kernel series
	// selected by Pattern (RE2 on short names) and/or Family.
	Metric  sql.NullString
	Pattern sql.NullString
	Family  sql.NullString
}

// HistoryStepsRow is one step of one run (history_steps.sql). Times are
// nanoseconds.
type HistoryStepsRow struct {
	RunID           int64
	Stage           string
	TraceID         int64
	Step            int64
	ValueNS         int64
	Launches        int64
	Steps           int64
	LaunchesPerStep float64
	SharePct        sql.NullFloat64
}

// HistorySteps returns the per-step samples of a history series, sorted
// by run, stage, trace and step: the runs of FreshRuns read from their
// saved step aggregates in one query, each other run of Runs computed in
// one query of its own.
func HistorySteps(ctx context.Context, q Querier, p HistoryStepsParams) ([]HistoryStepsRow, error) {
	fresh := map[int64]bool{}
	freshList := []int64{}
	for _, r := range p.FreshRuns {
		if !fresh[r] {
			fresh[r] = true
			freshList = append(freshList, r)
		}
	}
	args := func(run sql.NullInt64, freshRuns []int64) []any {
		return []any{sql.Named("fresh_runs", freshRuns), sql.Named("run", run), sql.Named("stage", p.Stage),
			sql.Named("rank", p.Rank), sql.Named("keep_edges", p.KeepEdges), sql.Named("metric", p.Metric),
			sql.Named("pattern", p.Pattern), sql.Named("family", p.Family)}
	}
	scan := func(rows *sql.Rows) (HistoryStepsRow, error) {
		var r HistoryStepsRow
		err := rows.Scan(&r.RunID, &r.Stage, &r.TraceID, &r.Step, &r.ValueNS, &r.Launches, &r.Steps,
			&r.LaunchesPerStep, &r.SharePct)
		return r, err
	}
	var out []HistoryStepsRow
	if len(freshList) > 0 {
		// no run to compute ($run NULL): the computing macros' twins
		twins := stepTwins(true, "step_totals_for", "step_kernels_for", "_idle_step_causes")
		rows, err := collectSaved(ctx, q, "history_steps", twins, args(sql.NullInt64{}, freshList), scan)
		if err != nil {
			return nil, err
		}
		out = rows
	}
	done := map[int64]bool{}
	for _, run := range p.Runs {
		if fresh[run] || done[run] {
			continue
		}
		done[run] = true
		rows, err := collect(ctx, q, "history_steps", args(sql.NullInt64{Int64: run, Valid: true}, []int64{}), scan)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	slices.SortFunc(out, func(a, b HistoryStepsRow) int {
		return cmp.Or(cmp.Compare(a.RunID, b.RunID), cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.TraceID, b.TraceID),
			cmp.Compare(a.Step, b.Step))
	})
	return out, nil
}

// HistoryFamilies lists the families a history --family may name
// (history_families.sql).
func HistoryFamilies(ctx context.Context, q Querier) ([]string, error) {
	return collect(ctx, q, "history_families", nil, func(rows *sql.Rows) (string, error) {
		var f string
		err := rows.Scan(&f)
		return f, err
	})
}
