package queries

import (
	"context"
	"database/sql"
)

// TimelineParams selects timeline_window.sql's events.
type TimelineWindowParams struct {
	Trace  int64
	Device sql.NullInt64 // invalid matches events without a device
	FromNS int64
	ToNS   int64
}

// TimelineEvent is one row of timeline_window.sql.
type TimelineWindowRow struct {
	KernelID int64
	Name     string // short name
	Category string
	Stream   sql.NullInt64
	TSNS     int64
	DurNS    int64
}

// TimelineWindow returns the events of one trace and device overlapping
// [FromNS, ToNS), sorted by stream, start and kernel_id.
func TimelineWindow(ctx context.Context, q Querier, p TimelineWindowParams) ([]TimelineWindowRow, error) {
	args := []any{sql.Named("trace", p.Trace), sql.Named("device", p.Device),
		sql.Named("from_ns", p.FromNS), sql.Named("to_ns", p.ToNS)}
	return collect(ctx, q, "timeline_window", args, func(rows *sql.Rows) (TimelineWindowRow, error) {
		var e TimelineWindowRow
		err := rows.Scan(&e.KernelID, &e.Name, &e.Category, &e.Stream, &e.TSNS, &e.DurNS)
		return e, err
	})
}

// Timeline window rule: max(40 us, 6 x dur), starting
// 35% of the window before the instance.
const (
	minTimelineWindowNS = 40_000
	timelineDurFactor   = 6
	timelineLeadPercent = 35
)

// TimelineAround returns the window drawn around an instance and its events.
func TimelineAround(ctx context.Context, q Querier, inst Instance) (fromNS, toNS int64, events []TimelineWindowRow, err error) {
	fromNS, toNS = TimelineBounds(inst.TSNS, inst.DurNS)
	events, err = TimelineWindow(ctx, q, TimelineWindowParams{Trace: inst.TraceID, Device: inst.Device, FromNS: fromNS, ToNS: toNS})
	return fromNS, toNS, events, err
}

// TimelineBounds applies the window rule to an instance starting at tsNS
// and lasting durNS.
func TimelineBounds(tsNS, durNS int64) (fromNS, toNS int64) {
	window := max(int64(minTimelineWindowNS), timelineDurFactor*durNS)
	fromNS = tsNS - window*timelineLeadPercent/100
	return fromNS, fromNS + window
}
