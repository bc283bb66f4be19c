package queries

import (
	"context"
	"database/sql"
)

// OverlapFingerprint is run's overlap fingerprint (overlap_fingerprint.sql),
// for the OverlapFP field of StageBusyParams, OverlapByKernelParams and
// FusionMatchesParams: a report that computes it once spares each of those
// checks a pass over the run's kernels. It is only good for the warehouse
// as it is now: compute it again after anything changes the run's kernels
// or their names' categories.
func OverlapFingerprint(ctx context.Context, q Querier, run int64) (sql.NullString, error) {
	rows, err := collect(ctx, q, "overlap_fingerprint", []any{sql.Named("run", run)}, func(rows *sql.Rows) (string, error) {
		var s string
		err := rows.Scan(&s)
		return s, err
	})
	if err != nil || len(rows) != 1 {
		return sql.NullString{}, err
	}
	return sql.NullString{String: rows[0], Valid: true}, nil
}
