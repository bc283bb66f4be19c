package queries

import (
	"context"
	"database/sql"
)

// FamilyRollupParams selects family_rollup.sql's rows.
type FamilyRollupParams struct {
	Run   int64
	Rank  sql.NullInt64  // invalid = every rank
	Stage sql.NullString // NULL = every stage
}

// FamilyRollupRow is one family of one stage. Times are nanoseconds.
type FamilyRollupRow struct {
	Stage         string
	Family        string
	GPUNS         int64
	Launches      int64
	StageKernelNS int64
	SharePct      float64 // of StageKernelNS
}

// FamilyRollup returns each stage's GPU time per family, largest first.
func FamilyRollup(ctx context.Context, q Querier, p FamilyRollupParams) ([]FamilyRollupRow, error) {
	args := []any{sql.Named("run", p.Run), sql.Named("rank", p.Rank), sql.Named("stage", p.Stage)}
	return collect(ctx, q, "family_rollup", args, func(rows *sql.Rows) (FamilyRollupRow, error) {
		var r FamilyRollupRow
		err := rows.Scan(&r.Stage, &r.Family, &r.GPUNS, &r.Launches, &r.StageKernelNS, &r.SharePct)
		return r, err
	})
}
