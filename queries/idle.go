package queries

import (
	"context"
	"database/sql"
)

// DefaultIdleGaps is how many of the longest gaps a triage stage lists.
const DefaultIdleGaps = 3

// DefaultIdleSteps is how many steps of a stage the HTML report draws a
// bar for.
const DefaultIdleSteps = 24

// IdleParams selects the rows of idle_by_stage.sql and idle_worst_gaps.sql.
type IdleParams struct {
	Run   int64
	Rank  sql.NullInt64  // invalid = every rank
	Stage sql.NullString // NULL = every stage
	// LaunchGapNS is the launch-latency threshold; invalid = the saved
	// rows' 30 us (sqllib/idle.sql).
	LaunchGapNS sql.NullInt64
	// Gaps is how many of the longest gaps per stage IdleWorstGaps returns.
	Gaps int
	// Steps is how many (step, rank) pairs per stage IdleByStep returns.
	Steps int
	// Fresh says the run's saved idle rows are current (IdleFresh).
	Fresh bool
}

// IdleByStageRow is one part of one stage's (and scope's, and stream's)
// step time (idle_by_stage.sql). Times are nanoseconds.
type IdleByStageRow struct {
	Stage    string
	Scope    string        // device | stream
	Stream   sql.NullInt64 // scope stream only
	Steps    int64
	WindowNS int64
	// WindowPerStepNS is WindowNS / Steps.
	WindowPerStepNS float64
	Gaps            int64
	Part            string // busy | host_bound | launch_latency | sync | graph_internal | other
	NS              int64
	PerStepNS       float64
	SharePct        sql.NullFloat64
	// LaunchGapNS is the launch-latency threshold the causes used.
	LaunchGapNS int64
}

// IdleWorstGapsRow is one of a stage's longest gaps (idle_worst_gaps.sql).
type IdleWorstGapsRow struct {
	Stage      string
	Rank       int64
	Step       int64
	GapNS      int64
	GapStartNS int64
	Cause      string
	Before     string
	After      string
	Site       sql.NullString
	KernelID   int64
}

// IdleFresh says whether run's saved idle rows are current (idle_fresh.sql);
// overlapFP is the run's OverlapFingerprint (invalid: computed here).
func IdleFresh(ctx context.Context, q Querier, run int64, overlapFP sql.NullString) (bool, error) {
	return isFreshGiven(ctx, q, "idle_fresh", "_steps_current", overlapFP, []any{sql.Named("run", run)})
}

// twins is the saved-copy twin an idle query reads through when the copy
// is current and the launch gap the saved one (what the *_cached macro
// would read then), else nil.
func (p IdleParams) twins(cached, saved string) []savedTwin {
	if !p.Fresh || p.LaunchGapNS.Valid {
		return nil
	}
	return []savedTwin{{cached, saved}}
}

// IdleByStage returns each stage's busy and idle time by cause.
func IdleByStage(ctx context.Context, q Querier, p IdleParams) ([]IdleByStageRow, error) {
	args := []any{sql.Named("run", p.Run), sql.Named("rank", p.Rank), sql.Named("stage", p.Stage),
		sql.Named("launch_gap_ns", p.LaunchGapNS), sql.Named("fresh", p.Fresh)}
	return collectSaved(ctx, q, "idle_by_stage", p.twins("_idle_steps_cached", "_idle_steps_saved"), args, func(rows *sql.Rows) (IdleByStageRow, error) {
		var r IdleByStageRow
		err := rows.Scan(&r.Stage, &r.Scope, &r.Stream, &r.Steps, &r.WindowNS, &r.WindowPerStepNS, &r.Gaps, &r.Part, &r.NS,
			&r.PerStepNS, &r.SharePct, &r.LaunchGapNS)
		return r, err
	})
}

// IdleWorstGaps returns the p.Gaps longest gaps of each stage.
func IdleWorstGaps(ctx context.Context, q Querier, p IdleParams) ([]IdleWorstGapsRow, error) {
	args := []any{sql.Named("run", p.Run), sql.Named("rank", p.Rank), sql.Named("stage", p.Stage),
		sql.Named("n", p.Gaps), sql.Named("launch_gap_ns", p.LaunchGapNS), sql.Named("fresh", p.Fresh)}
	return collectSaved(ctx, q, "idle_worst_gaps", p.twins("_idle_worst_gaps_cached", "_idle_worst_gaps_saved"), args, func(rows *sql.Rows) (IdleWorstGapsRow, error) {
		var r IdleWorstGapsRow
		err := rows.Scan(&r.Stage, &r.Rank, &r.Step, &r.GapNS, &r.GapStartNS, &r.Cause, &r.Before, &r.After,
			&r.Site, &r.KernelID)
		return r, err
	})
}

// IdleByStepRow is one part of one step's time on its rank's device(s)
// (idle_by_step.sql). Times are nanoseconds.
type IdleByStepRow struct {
	Stage string
	Rank  int64
	Step  int64
	// StageSteps counts the stage's (step, rank) pairs, shown or not.
	StageSteps int64
	WindowNS   int64
	Part       string // busy | host_bound | launch_latency | sync | graph_internal | other
	NS         int64
	SharePct   sql.NullFloat64
}

// IdleByStep returns the parts of the first p.Steps steps of each stage.
func IdleByStep(ctx context.Context, q Querier, p IdleParams) ([]IdleByStepRow, error) {
	args := []any{sql.Named("run", p.Run), sql.Named("rank", p.Rank), sql.Named("stage", p.Stage),
		sql.Named("n", p.Steps), sql.Named("launch_gap_ns", p.LaunchGapNS), sql.Named("fresh", p.Fresh)}
	return collectSaved(ctx, q, "idle_by_step", p.twins("_idle_steps_cached", "_idle_steps_saved"), args, func(rows *sql.Rows) (IdleByStepRow, error) {
		var r IdleByStepRow
		err := rows.Scan(&r.Stage, &r.Rank, &r.Step, &r.StageSteps, &r.WindowNS, &r.Part, &r.NS, &r.SharePct)
		return r, err
	})
}
