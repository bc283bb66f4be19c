package queries

import (
	"context"
	"database/sql"
	"time"
)

// RunSelectRow is one row of run_select.sql.
type RunSelectRow struct {
	RunID      int64
	Label      string
	IngestedAt time.Time
	Tags       []string // key=value, sorted by key
}

// RunSelect lists runs newest first, only those tagged key=value when key
// is valid.
func RunSelect(ctx context.Context, q Querier, key, value sql.NullString) ([]RunSelectRow, error) {
	return collect(ctx, q, "run_select", []any{sql.Named("key", key), sql.Named("value", value)},
		func(rows *sql.Rows) (RunSelectRow, error) {
			var r RunSelectRow
			var tags []any
			err := rows.Scan(&r.RunID, &r.Label, &r.IngestedAt, &tags)
			r.Tags = fusionStrings(tags)
			return r, err
		})
}
