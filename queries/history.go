package queries

import (
	"context"
	"database/sql"
)

// History metrics (history_steps.sql's $metric).
const (
	MetricStepTime    = "step_time"
	MetricBusy        = "busy"
	MetricExposedComm = "exposed_comm"
)

// HistoryMetrics lists the accepted metrics.
var HistoryMetrics = []string{MetricStepTime, MetricBusy, MetricExposedComm}

// HistoryStepsParams selects one history series over some runs.
type HistoryStepsParams struct {
	Runs []int64
	// FreshRuns are those of Runs whose saved step aggregates are current
	// (StepsFresh): read from the stores; the others are computed.
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

// HistorySteps returns the per-step samples of a history series.
func HistorySteps(ctx context.Context, q Querier, p HistoryStepsParams) ([]HistoryStepsRow, error) {
	runs, fresh := p.Runs, p.FreshRuns
	if runs == nil {
		runs = []int64{}
	}
	if fresh == nil {
		fresh = []int64{}
	}
	args := []any{sql.Named("runs", runs), sql.Named("fresh_runs", fresh), sql.Named("stage", p.Stage), sql.Named("rank", p.Rank),
		sql.Named("keep_edges", p.KeepEdges), sql.Named("metric", p.Metric), sql.Named("pattern", p.Pattern),
		sql.Named("family", p.Family)}
	return collect(ctx, q, "history_steps", args, func(rows *sql.Rows) (HistoryStepsRow, error) {
		var r HistoryStepsRow
		err := rows.Scan(&r.RunID, &r.Stage, &r.TraceID, &r.Step, &r.ValueNS, &r.Launches, &r.Steps,
			&r.LaunchesPerStep, &r.SharePct)
		return r, err
	})
}
