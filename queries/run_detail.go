package queries

import (
	"context"
	"database/sql"
	"time"
)

// RunDetailRow is the one row of run_detail.sql.
type RunDetailRow struct {
	RunID             int64
	Label             string
	Framework         string
	FrameworkEvidence string
	Model             string
	SourceDir         string
	TP, DP, EP, PP    sql.NullInt64
	CUDAGraph         sql.NullBool
	IngestedAt        time.Time
	Tags              []string
	ServerArgsKeys    sql.NullInt64
	OverlapSaved      bool
}

// RunDetail describes the run labelled label; nil, nil when there is none.
func RunDetail(ctx context.Context, q Querier, label string) (*RunDetailRow, error) {
	rows, err := collect(ctx, q, "run_detail", []any{sql.Named("label", label)}, func(rows *sql.Rows) (RunDetailRow, error) {
		var r RunDetailRow
		var tags []any
		err := rows.Scan(&r.RunID, &r.Label, &r.Framework, &r.FrameworkEvidence, &r.Model, &r.SourceDir,
			&r.TP, &r.DP, &r.EP, &r.PP, &r.CUDAGraph, &r.IngestedAt, &tags, &r.ServerArgsKeys, &r.OverlapSaved)
		for _, t := range tags {
			if s, ok := t.(string); ok {
				r.Tags = append(r.Tags, s)
			}
		}
		return r, err
	})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}
