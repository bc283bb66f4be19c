package queries

import (
	"context"
	"database/sql"
	"time"
)

// RunsRow is one row of runs.sql.
type RunsRow struct {
	RunID      int64
	Label      string
	Framework  string
	Model      string
	Traces     int64
	Ranks      []int64
	Stages     []string
	GPUEvents  int64
	IngestedAt time.Time
	Formats    []string // the traces' source formats: kineto, nsys
	Tags       []string // key=value, sorted by key
}

// Runs lists runs with at least one trace, newest first.
func Runs(ctx context.Context, q Querier) ([]RunsRow, error) {
	return RunsTagged(ctx, q, nil)
}

// RunsTagged lists the runs with at least one trace that carry every tag
// of tags ("key=value"), newest first.
func RunsTagged(ctx context.Context, q Querier, tags []string) ([]RunsRow, error) {
	if tags == nil {
		tags = []string{}
	}
	return collect(ctx, q, "runs", []any{sql.Named("tags", tags)}, func(rows *sql.Rows) (RunsRow, error) {
		var r RunsRow
		var ranks, stages, formats, tagList []any
		err := rows.Scan(&r.RunID, &r.Label, &r.Framework, &r.Model, &r.Traces, &ranks, &stages, &r.GPUEvents, &r.IngestedAt, &formats, &tagList)
		r.Tags = fusionStrings(tagList)
		for _, v := range ranks {
			if n, ok := v.(int32); ok {
				r.Ranks = append(r.Ranks, int64(n))
			}
		}
		for _, v := range stages {
			if s, ok := v.(string); ok {
				r.Stages = append(r.Stages, s)
			}
		}
		for _, v := range formats {
			if s, ok := v.(string); ok {
				r.Formats = append(r.Formats, s)
			}
		}
		return r, err
	})
}
