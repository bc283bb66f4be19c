package queries

import (
	"context"
	"database/sql"
)

// OverlapParams selects the overlap-opportunity table's rows.
type OverlapByKernelParams struct {
	// Run supplies timing (the formal run in two-trace mode).
	Run int64
	// Mapping lends Python scopes (two-trace mode); invalid = single-trace.
	Mapping sql.NullInt64
	// Rank restricts to one rank; invalid = every rank.
	Rank sql.NullInt64
	// Stage restricts to one stage ("prefill", "decode", ...); NULL = all.
	Stage sql.NullString
	// MinShare is the percent of the stage's GPU busy time under which a row
	// is P5 and left out; 0 keeps every row.
	MinShare float64
	// MinDurUS is the verdicts' "total >= 5 us" floor; 0 means 5.
	MinDurUS float64
	// MaxRows caps the rows per stage after sorting; 0 = no cap.
	MaxRows int
	// OverlapFP is the run's OverlapFingerprint; invalid = computed by the
	// query (it says whether the saved copies are current).
	OverlapFP sql.NullString
	// OverlapSaved says whether the run's saved per-kernel overlap is
	// current (OverlapFresh), when the caller knows; invalid = asked here.
	// When it is, the rows are computed from it without binding the
	// computation kernel_overlap_cached would skip (_overlap_rows_saved:
	// 4-6 of a demo run's 35 ms).
	OverlapSaved sql.NullBool
}

// DefaultMinDurUS is the overlap verdicts' floor: a kernel whose total
// time in the stage is under 5 µs is `negligible` whatever its overlap.
const DefaultMinDurUS = 5

// DefaultMinDurNS is DefaultMinDurUS in ns: the floor target.Finish has
// aggregates.Finish save the overlap rows for (aggregates.SaveOverlapRows).
const DefaultMinDurNS = DefaultMinDurUS * 1000

// OverlapRow is one row of overlap_by_kernel.sql. Times are nanoseconds.
type OverlapByKernelRow struct {
	Stage          string
	Priority       string // P1 .. P5
	Verdict        string // headroom | low-roi-hidden | hidden | negligible
	Kernel         string // short name
	Family         string
	Category       string
	Scope          string // site display, or "unmapped"
	ScopeMatch     string // self | exact | base | unmapped
	Launches       int64
	TotalNS        int64
	HiddenNS       int64
	HiddenByComp   int64
	ExclusiveNS    int64
	StageBusyNS    int64 // the busy_share_pct denominator
	BusySharePct   float64
	ExclusivePct   float64
	HiddenPct      float64
	Dominant       sql.NullString // NULL when nothing on another stream overlaps it
	DepRisk        string         // low | high | unclear
	Recommendation string
	Longest        Instance
}

// Instance locates one kernel, the anchor of a timeline.
type Instance struct {
	KernelID int64
	TraceID  int64
	TSNS     int64
	DurNS    int64
	Device   sql.NullInt64
	Stream   sql.NullInt64
}

// OverlapByKernel returns the overlap-opportunity table, sorted by stage,
// priority, exclusive time (descending) and name.
func OverlapByKernel(ctx context.Context, q Querier, p OverlapByKernelParams) ([]OverlapByKernelRow, error) {
	minDur := p.MinDurUS
	if minDur == 0 {
		minDur = DefaultMinDurUS
	}
	minDurNS := int64(minDur * 1000)
	args := []any{
		sql.Named("run", p.Run),
		sql.Named("mapping", p.Mapping),
		sql.Named("rank", p.Rank),
		sql.Named("stage", p.Stage),
		sql.Named("min_share", p.MinShare),
		sql.Named("min_dur_ns", minDurNS),
		sql.Named("overlap_fp", p.OverlapFP),
		sql.Named("runs", nil),
	}
	saved := p.OverlapSaved.Bool
	if !p.OverlapSaved.Valid {
		var err error
		if saved, err = OverlapFresh(ctx, q, p.Run, p.OverlapFP); err != nil {
			return nil, err
		}
	}
	var twins []savedTwin
	if saved {
		twins = []savedTwin{{"_overlap_rows_for", "_overlap_rows_saved"}}
	}
	rows, err := collectSaved(ctx, q, "overlap_by_kernel", twins, args, scanOverlapByKernel)
	return capOverlapRows(rows, err, p.MaxRows)
}

// OverlapByKernelCached returns OverlapByKernel(p), read from the rows
// aggregates.SaveOverlapRows saved when p is a single-trace report of one rank
// and that copy is current and made for p's verdict floor
// (overlap_rows_fresh.sql, overlap_by_kernel_saved.sql), and computed
// otherwise. saved says which.
func OverlapByKernelCached(ctx context.Context, q Querier, p OverlapByKernelParams) (rows []OverlapByKernelRow, saved bool, err error) {
	if !p.Mapping.Valid && p.Rank.Valid {
		minDur := p.MinDurUS
		if minDur == 0 {
			minDur = DefaultMinDurUS
		}
		fresh, err := isFreshGiven(ctx, q, "overlap_rows_fresh", "_overlap_rows_current", p.OverlapFP,
			[]any{sql.Named("run", p.Run), sql.Named("rank", p.Rank.Int64), sql.Named("min_dur_ns", int64(minDur*1000))})
		if err != nil {
			return nil, false, err
		}
		if fresh {
			rows, err := collect(ctx, q, "overlap_by_kernel_saved", []any{sql.Named("run", p.Run), sql.Named("rank", p.Rank.Int64),
				sql.Named("stage", p.Stage), sql.Named("min_share", p.MinShare)}, scanOverlapByKernel)
			rows, err = capOverlapRows(rows, err, p.MaxRows)
			return rows, true, err
		}
	}
	rows, err = OverlapByKernel(ctx, q, p)
	return rows, false, err
}

func scanOverlapByKernel(rows *sql.Rows) (OverlapByKernelRow, error) {
	var r OverlapByKernelRow
	var run, rank any // the report's own, known to the caller
	err := rows.Scan(&r.Stage, &r.Priority, &r.Verdict, &r.Kernel, &r.Family, &r.Category,
		&r.Scope, &r.ScopeMatch, &r.Launches, &r.TotalNS, &r.HiddenNS, &r.HiddenByComp,
		&r.ExclusiveNS, &r.StageBusyNS, &r.BusySharePct, &r.ExclusivePct, &r.HiddenPct,
		&r.Dominant, &r.DepRisk, &r.Recommendation,
		&r.Longest.KernelID, &r.Longest.TraceID, &r.Longest.TSNS, &r.Longest.DurNS,
		&r.Longest.Device, &r.Longest.Stream, &run, &rank)
	return r, err
}

// capOverlapRows keeps the first maxRows rows of each stage (0 = all).
func capOverlapRows(rows []OverlapByKernelRow, err error, maxRows int) ([]OverlapByKernelRow, error) {
	if err != nil || maxRows <= 0 {
		return rows, err
	}
	// Cap per stage; rows arrive grouped by stage.
	out := rows[:0]
	stage, n := "", 0
	for _, r := range rows {
		if r.Stage != stage {
			stage, n = r.Stage, 0
		}
		if n < maxRows {
			out = append(out, r)
		}
		n++
	}
	return out, nil
}
