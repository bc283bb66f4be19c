package queries

import (
	"context"
	"database/sql"
)

// LaunchParams selects the rows of launch_by_kernel.sql,
// launch_by_stage.sql, kernel_spread.sql and comm_overlap.sql.
type LaunchParams struct {
	Run   int64
	Rank  sql.NullInt64  // invalid = every rank
	Stage sql.NullString // NULL = every stage
	// Fresh says whether the run's copies saved with its step aggregates
	// are current (IdleFresh, StepsFresh); invalid = checked by the query.
	Fresh sql.NullBool
	// Saved says the saved launch and spread rows answer for Run and Rank
	// (LaunchSaved): the queries then read them alone.
	Saved bool
}

// LaunchSaved says whether the saved launch and spread rows answer for
// p.Run and p.Rank (launch_saved.sql), for LaunchParams.Saved.
func LaunchSaved(ctx context.Context, q Querier, p LaunchParams) (bool, error) {
	var twins []savedTwin
	if p.Fresh.Valid {
		// the freshness given: not the check it would skip
		twins = []savedTwin{{"_launch_saved", "_launch_saved_given"}}
	}
	return freshVia(ctx, q, "launch_saved", twins, []any{sql.Named("run", p.Run), sql.Named("rank", p.Rank), sql.Named("fresh", p.Fresh)})
}

// twins is the saved-copy twin a launch or spread query reads through
// when p.Saved, else nil.
func (p LaunchParams) twins(cached, saved string) []savedTwin {
	if !p.Saved {
		return nil
	}
	return []savedTwin{{cached, saved}}
}

func (p LaunchParams) args() []any {
	return []any{sql.Named("run", p.Run), sql.Named("rank", p.Rank), sql.Named("stage", p.Stage),
		sql.Named("fresh", p.Fresh)}
}

// LaunchFigures are the launch-to-start delay and launch call duration
// over a set of launched GPU events (sqllib/launch.sql); invalid when none
// was launched. Nanoseconds.
type LaunchFigures struct {
	DelayP50NS, DelayP90NS sql.NullFloat64
	DelayMaxNS             sql.NullInt64
	LaunchP50NS            sql.NullFloat64
	LaunchMaxNS            sql.NullInt64
}

// LaunchByKernelRow is one kernel's launch overhead (launch_by_kernel.sql).
type LaunchByKernelRow struct {
	Stage     string
	ShortName string
	Events    int64
	// Launched counts the events with a launch of their own.
	Launched int64
	LaunchFigures
	// LaunchBound counts launched events shorter than their launch call;
	// Short the events under 10 µs.
	LaunchBound int64
	Short       int64
}

// LaunchByKernel returns the launch overhead of each kernel.
func LaunchByKernel(ctx context.Context, q Querier, p LaunchParams) ([]LaunchByKernelRow, error) {
	return collectSaved(ctx, q, "launch_by_kernel", p.twins("_launch_kernels_cached", "_launch_kernels_saved"), p.args(), func(rows *sql.Rows) (LaunchByKernelRow, error) {
		var r LaunchByKernelRow
		err := rows.Scan(&r.Stage, &r.ShortName, &r.Events, &r.Launched, &r.DelayP50NS, &r.DelayP90NS, &r.DelayMaxNS,
			&r.LaunchP50NS, &r.LaunchMaxNS, &r.LaunchBound, &r.Short)
		return r, err
	})
}

// LaunchByStageRow is one stage's launch overhead (launch_by_stage.sql).
type LaunchByStageRow struct {
	Stage    string
	Events   int64
	Launched int64
	Short    int64
	ShortPct float64
	// LaunchBoundPct is of the launched events; invalid when none was.
	LaunchBound    int64
	LaunchBoundPct sql.NullFloat64
	LaunchFigures
	ShortNS int64
}

// LaunchByStage returns each stage's launch overhead.
func LaunchByStage(ctx context.Context, q Querier, p LaunchParams) ([]LaunchByStageRow, error) {
	return collectSaved(ctx, q, "launch_by_stage", p.twins("_launch_stages_cached", "_launch_stages_saved"), p.args(), func(rows *sql.Rows) (LaunchByStageRow, error) {
		var r LaunchByStageRow
		err := rows.Scan(&r.Stage, &r.Events, &r.Launched, &r.Short, &r.ShortPct, &r.LaunchBound, &r.LaunchBoundPct,
			&r.DelayP50NS, &r.DelayP90NS, &r.DelayMaxNS, &r.LaunchP50NS, &r.LaunchMaxNS, &r.ShortNS)
		return r, err
	})
}

// KernelSpreadRow is one kernel's duration spread (kernel_spread.sql).
// Nanoseconds.
type KernelSpreadRow struct {
	Stage        string
	ShortName    string
	Events       int64
	MinNS        int64
	P50NS, P90NS float64
	MaxNS        int64
	// StddevNS is the sample standard deviation; invalid for one event.
	StddevNS sql.NullFloat64
}

// KernelSpread returns each kernel's duration spread.
func KernelSpread(ctx context.Context, q Querier, p LaunchParams) ([]KernelSpreadRow, error) {
	return collectSaved(ctx, q, "kernel_spread", p.twins("_kernel_spread_cached", "_kernel_spread_saved"), p.args(), func(rows *sql.Rows) (KernelSpreadRow, error) {
		var r KernelSpreadRow
		err := rows.Scan(&r.Stage, &r.ShortName, &r.Events, &r.MinNS, &r.P50NS, &r.P90NS, &r.MaxNS, &r.StddevNS)
		return r, err
	})
}

// CommOverlapRow is one stage and rank's communication hidden under
// computation (comm_overlap.sql). Nanoseconds.
type CommOverlapRow struct {
	Stage                     string
	Rank                      int64
	CommNS, CompNS, OverlapNS int64
	// OverlapPct is of CommNS; invalid without communication.
	OverlapPct sql.NullFloat64
}

// CommOverlap returns each stage and rank's communication overlap, read
// from the copy saved with the step aggregates when it is current.
func CommOverlap(ctx context.Context, q Querier, p LaunchParams) ([]CommOverlapRow, error) {
	var twins []savedTwin
	if p.Fresh.Valid && p.Fresh.Bool {
		twins = []savedTwin{{"_comm_overlap_for", "_comm_overlap_saved"}}
	}
	return collectSaved(ctx, q, "comm_overlap", twins, p.args(), func(rows *sql.Rows) (CommOverlapRow, error) {
		var r CommOverlapRow
		err := rows.Scan(&r.Stage, &r.Rank, &r.CommNS, &r.CompNS, &r.OverlapNS, &r.OverlapPct)
		return r, err
	})
}
