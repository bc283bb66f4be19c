package queries

import (
	"context"
	"database/sql"
)

// KernelTableParams selects kernel_table.sql's rows.
type KernelTableParams struct {
	// Run supplies the timing (the formal run in two-trace mode).
	Run int64
	// Rank restricts to one rank; invalid = every rank.
	Rank sql.NullInt64
	// Stage restricts to one stage; NULL = every stage.
	Stage sql.NullString
	// MinShare is the percent of the stage's summed kernel time under which
	// a row comes back with Shown false.
	MinShare float64
}

// KernelTableRow is one row of kernel_table.sql: one short name in one
// stage. Times are nanoseconds.
type KernelTableRow struct {
	Stage         string
	Kernel        string // short name
	Family        string
	Category      string
	GPUNS         int64
	Launches      int64
	AvgNS         float64
	StageKernelNS int64 // the share's denominator
	SharePct      float64
	Shown         bool // SharePct >= MinShare
	// Spread of GPUNS across the stage's ranks (a rank without the kernel
	// counts 0); meaningful when Rank is invalid.
	RankMinNS    int64
	RankMedianNS float64
	RankMaxNS    int64
	Ranks        int64
	// What MinShare hides in the row's stage: rows and their GPU time.
	StageHiddenRows int64
	StageHiddenNS   int64
}

// KernelTable returns every kernel row of the run, sorted by stage, GPU
// time descending and name; rows under MinShare have Shown false.
func KernelTable(ctx context.Context, q Querier, p KernelTableParams) ([]KernelTableRow, error) {
	args := []any{
		sql.Named("run", p.Run),
		sql.Named("rank", p.Rank),
		sql.Named("stage", p.Stage),
		sql.Named("min_share", p.MinShare),
	}
	return collect(ctx, q, "kernel_table", args, func(rows *sql.Rows) (KernelTableRow, error) {
		var r KernelTableRow
		err := rows.Scan(&r.Stage, &r.Kernel, &r.Family, &r.Category, &r.GPUNS, &r.Launches,
			&r.AvgNS, &r.StageKernelNS, &r.SharePct, &r.Shown,
			&r.RankMinNS, &r.RankMedianNS, &r.RankMaxNS, &r.Ranks, &r.StageHiddenRows, &r.StageHiddenNS)
		return r, err
	})
}
