package target

import (
	"context"
	"database/sql"
	"errors"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/schema"
)

// Finish is aggregates.Finish for the reports' verdict floor
// (queries.DefaultMinDurNS, for which the overlap rows are saved), then
// the triage report of every run without a saved one (SaveTriages):
// `ingest`, `triage PATH`, `compare PATH` and `capture` end with it. A
// run whose copy failed to save does not stop the others' (the failures
// are joined in one *aggregates.FinishError).
func Finish(ctx context.Context, db *sql.DB, cat *catalog.Catalog) error {
	err := aggregates.Finish(ctx, db, cat, queries.DefaultMinDurNS)
	if fe := (*aggregates.FinishError)(nil); err != nil && !errors.As(err, &fe) {
		return err
	}
	return aggregates.JoinFinishErrors(err, SaveTriages(ctx, db))
}

// SaveTriages saves the triage report of every run whose saved report is
// missing or older than one of its traces (aggregates.TriagePending): what
// `triage RUN` shows with the default sections (its rank as RankOf picks
// it without --rank), computed by queries.Triage from the copies Finish
// saved and read back by assemble.Triage while current. It runs after
// Finish, whose copies make computing it cheap.
func SaveTriages(ctx context.Context, db *sql.DB) error {
	runs, err := aggregates.TriagePending(ctx, db)
	if err != nil || len(runs) == 0 {
		return err
	}
	recipe, err := TriageRecipe()
	if err != nil {
		return err
	}
	return aggregates.SaveTriage(ctx, db, runs, func(ctx context.Context, run int64) (*aggregates.TriageReport, error) {
		events, err := queries.TriageGPUEvents(ctx, db, run)
		if err != nil {
			return nil, err
		}
		rank, _, err := RankOf(events, Run{ID: run}, 0, false)
		if err != nil {
			return nil, err
		}
		p := queries.TriageParams{Run: run, Rank: sql.NullInt64{Int64: rank, Valid: true},
			MinShare: queries.DefaultMinShare, OverlapRows: queries.DefaultOverlapRows, GPUEvents: events}
		restore, err := SmallPlans(ctx, db, GPUEvents(events), 0)
		if err != nil {
			return nil, err
		}
		d, err := queries.Triage(ctx, db, p)
		if err = errors.Join(err, restore()); err != nil {
			return nil, err
		}
		return triageReport(d, rank, recipe), nil
	})
}

// SmallPlans turns DuckDB's optimizers that pay only on large inputs off
// (schema.SmallPlans) until restore when events, the GPU events of every
// run a step reads, are at most bound (0: aggregates.SmallRunEvents, the
// finish's bound), and changes nothing above it: SaveTriages computing a
// run's triage report, and assemble's triage, compare and history steps.
// A report over more keeps them (a compressed materialization holds less
// memory; a join filter skips rows of large scans).
func SmallPlans(ctx context.Context, db *sql.DB, events, bound int64) (restore func() error, _ error) {
	if bound == 0 {
		bound = aggregates.SmallRunEvents
	}
	if events > bound {
		return func() error { return nil }, nil
	}
	return schema.SmallPlans(ctx, db)
}

// GPUEvents sums a run's GPU events (queries.TriageGPUEvents) over its
// stages and ranks.
func GPUEvents(rows []queries.TriageGPUEventsRow) int64 {
	var n int64
	for _, r := range rows {
		n += r.Events
	}
	return n
}

// triageReport is what SaveTriage stores of d, the report of the rank
// shown, made by a binary of recipe. A report JSON cannot hold (a NaN) is
// stored as a record with no recipe and no sections: no triage reads it
// (it computes the report, as without a save), and later finishes do not
// compute it again. The report is a copy: failing the ingest for it, as
// an error here would, would stop a run that triage shows.
func triageReport(d *queries.TriageData, rank int64, recipe string) *aggregates.TriageReport {
	r := &aggregates.TriageReport{Rank: rank, MinShare: d.Params.MinShare, OverlapRows: d.Params.OverlapRows}
	if sections, err := queries.TriageSections(d); err == nil {
		r.Recipe, r.Sections = recipe, sections
	}
	return r
}

// TriageRecipe is this binary's queries.TriageRecipe (for its SQL
// library): what a saved triage report must have been made with to be
// read.
func TriageRecipe() (string, error) {
	lib, err := schema.LibraryHash()
	if err != nil {
		return "", err
	}
	return queries.TriageRecipe(lib)
}
