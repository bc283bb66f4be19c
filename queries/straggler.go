package queries

import (
	"context"
	"database/sql"
)

// StragglerParams selects the rows of straggler_ranks.sql and
// straggler_sites.sql: every rank of a run.
type StragglerParams struct {
	Run   int64
	Stage sql.NullString // NULL = every stage
}

func (p StragglerParams) args() []any {
	return []any{sql.Named("run", p.Run), sql.Named("stage", p.Stage)}
}

// StragglerRankRow is one stage and rank's part in the run's collectives
// (straggler_ranks.sql). Nanoseconds.
type StragglerRankRow struct {
	Stage       string
	Rank        int64
	Collectives int64
	// Last counts the collectives the rank arrived last at; LastPct is of
	// Collectives.
	Last    int64
	LastPct float64
	// CausedWaitNS is what the other ranks waited at those; WaitNS what
	// this rank waited for the last arrival.
	CausedWaitNS int64
	WaitNS       int64
	// Straggler marks the stage's straggler rank.
	Straggler bool
}

// StragglerRanks returns each stage and rank's arrivals at collectives.
func StragglerRanks(ctx context.Context, q Querier, p StragglerParams) ([]StragglerRankRow, error) {
	return collect(ctx, q, "straggler_ranks", p.args(), func(rows *sql.Rows) (StragglerRankRow, error) {
		var r StragglerRankRow
		err := rows.Scan(&r.Stage, &r.Rank, &r.Collectives, &r.Last, &r.LastPct, &r.CausedWaitNS, &r.WaitNS, &r.Straggler)
		return r, err
	})
}

// StragglerSiteRow is one stage's collective kernel from one Python site
// (straggler_sites.sql). Nanoseconds.
type StragglerSiteRow struct {
	Stage       string
	Kernel      string
	Site        sql.NullString
	Collectives int64
	Steps       int64
	Ranks       int64
	// LastRank arrived last most often (invalid: no rank ever did), Last
	// times.
	LastRank sql.NullInt64
	Last     int64
	// WaitNS is every rank's wait for the last arrival, summed; the skew
	// is the last arrival minus the first, per collective.
	WaitNS    int64
	SkewP50NS int64
	SkewMaxNS int64
}

// StragglerSites returns each stage's collectives per kernel and site.
func StragglerSites(ctx context.Context, q Querier, p StragglerParams) ([]StragglerSiteRow, error) {
	return collect(ctx, q, "straggler_sites", p.args(), func(rows *sql.Rows) (StragglerSiteRow, error) {
		var r StragglerSiteRow
		err := rows.Scan(&r.Stage, &r.Kernel, &r.Site, &r.Collectives, &r.Steps, &r.Ranks, &r.LastRank, &r.Last,
			&r.WaitNS, &r.SkewP50NS, &r.SkewMaxNS)
		return r, err
	})
}
