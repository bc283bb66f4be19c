package queries

import (
	"context"
	"database/sql"
)

// StageBusyParams selects stage_busy.sql's rows.
type StageBusyParams struct {
	Run   int64
	Rank  sql.NullInt64  // invalid = every rank
	Stage sql.NullString // NULL = every stage
	// OverlapFP is the run's OverlapFingerprint; invalid = computed here.
	OverlapFP sql.NullString
	// Saved says the caller checked that the run's saved overlap is
	// current (OverlapFresh): the busy rows are then read from the store
	// without binding the computation device_busy_cached would skip.
	Saved bool
}

// StageBusyRow is one row of stage_busy.sql. Level "stage" rows total their
// stage (Rank, TraceID and Device invalid); level "device" rows are one
// device of one trace.
type StageBusyRow struct {
	Stage    string
	Level    string
	Rank     sql.NullInt64
	TraceID  sql.NullInt64
	Device   sql.NullInt64
	Kernels  int64
	KernelNS int64 // summed kernel time
	BusyNS   int64 // union of intervals per device, summed
	WindowNS int64 // last end - first start
	Streams  int64
}

// OverlapFresh says whether run's saved overlap and busy time are current
// (overlap_fresh.sql); overlapFP is the run's OverlapFingerprint (invalid:
// computed here).
func OverlapFresh(ctx context.Context, q Querier, run int64, overlapFP sql.NullString) (bool, error) {
	return isFreshGiven(ctx, q, "overlap_fresh", "_overlap_current", overlapFP, []any{sql.Named("run", run)})
}

// StageBusy returns per-stage and per-device GPU time totals.
func StageBusy(ctx context.Context, q Querier, p StageBusyParams) ([]StageBusyRow, error) {
	args := []any{sql.Named("run", p.Run), sql.Named("rank", p.Rank), sql.Named("stage", p.Stage),
		sql.Named("overlap_fp", p.OverlapFP)}
	var twins []savedTwin
	if p.Saved {
		twins = []savedTwin{{"device_busy_cached", "_device_busy_store_rows"}}
	}
	return collectSaved(ctx, q, "stage_busy", twins, args, func(rows *sql.Rows) (StageBusyRow, error) {
		var r StageBusyRow
		err := rows.Scan(&r.Stage, &r.Level, &r.Rank, &r.TraceID, &r.Device, &r.Kernels,
			&r.KernelNS, &r.BusyNS, &r.WindowNS, &r.Streams)
		return r, err
	})
}
