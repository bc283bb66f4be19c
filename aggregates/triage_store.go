package aggregates

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"

	"github.com/tracehouse/tracehouse/inline"
	"github.com/tracehouse/tracehouse/schema"
)

// PhaseTriage is saving the runs' triage reports (target.Finish, after
// Finish).
const PhaseTriage = "saving triage reports"

// triageStore names the triage report in finish_failures.
const triageStore = "triage report"

// TriageReport is one run's triage report as saved: what triage_store
// holds (see migration 0026 and sqllib/triage.sql).
type TriageReport struct {
	// Rank is the rank the report shows.
	Rank int64
	// MinShare and OverlapRows are the sections it was made for.
	MinShare    float64
	OverlapRows int
	// Recipe is the recipe of the binary that computed it
	// (queries.TriageRecipe).
	Recipe string
	// Sections are the report's sections by name, each its rows as JSON.
	Sections map[string]string
}

// TriageMaxGPUEvents is the most GPU events a run may have for a finish
// to save its triage report. A larger run's report is computed by its
// triage, as before reports were saved: at the finish of a 250 MB
// kernel-dense trace (422 k GPU events) the report cost 3-4 CPU-s and
// lifted the ingest's peak from 346-352 to 462-497 MiB, past issue 38's
// 400 MiB bound, for a triage that still takes about a second read from
// the save (its fingerprint reads every kernel) against 1.5 s computed.
// The 270 MB SGLang trace (85 k) is below it.
const TriageMaxGPUEvents = 1 << 17

// TriagePending lists the runs whose saved triage report is missing or
// older than one of their traces, of at most TriageMaxGPUEvents GPU
// events (triage_pending.sql).
func TriagePending(ctx context.Context, db *sql.DB) ([]int64, error) {
	runs, err := pendingRuns(ctx, db, "triage_pending", sql.Named("max_gpu_events", TriageMaxGPUEvents))
	if err != nil {
		return nil, fmt.Errorf("find runs without a saved triage report: %w", err)
	}
	return runs, nil
}

// SaveTriage saves, for every run of runs, the triage report compute
// returns (the aggregates package saves it but does not make it: a report
// is the queries' work), each run in a transaction of its own that
// replaces its earlier report. Its record holds the run's fingerprint
// (_triage_fingerprint) taken in that transaction, which the report was
// computed from as long as nothing else writes the warehouse meanwhile
// (the finish holds it for writing). A run whose report cannot be
// computed or saved fails alone, as in Finish: it is recorded
// (finish_failures) and named in the returned *FinishError, and the other
// runs are saved. compute returning nil saves nothing for that run (a
// report that cannot be encoded).
func SaveTriage(ctx context.Context, db *sql.DB, runs []int64, compute func(ctx context.Context, run int64) (*TriageReport, error)) error {
	if len(runs) == 0 {
		return nil
	}
	phase(ctx, PhaseTriage)
	var failed []FinishFailure
	for _, run := range runs {
		err := saveTriage(ctx, db, run, compute)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return err
		}
		f, rerr := recordFailure(ctx, db, triageStore, run, err)
		if rerr != nil {
			return errors.Join(err, rerr)
		}
		failed = append(failed, f)
	}
	if len(failed) > 0 {
		return &FinishError{Failures: failed}
	}
	return nil
}

// saveTriage computes and saves one run's report.
func saveTriage(ctx context.Context, db *sql.DB, run int64, compute func(ctx context.Context, run int64) (*TriageReport, error)) error {
	rep, err := compute(ctx, run)
	if err != nil || rep == nil {
		return err
	}
	fail := func(step string, err error) error {
		return fmt.Errorf("save the triage report of run %d: %s%w", run, step, err)
	}
	names := make([]string, 0, len(rep.Sections))
	for name := range rep.Sections {
		names = append(names, name)
	}
	sort.Strings(names)
	return inConnTx(ctx, db, fail, func(conn *sql.Conn) error {
		for _, name := range []string{"triage_store_forget", "triage_store_clear"} {
			if _, err := inline.Exec(ctx, conn, stmt(name), sql.Named("run", run)); err != nil {
				return fail(name+": ", err)
			}
		}
		// The sections go in through an appender: a prepared INSERT ran
		// once per section, 24 statements of a quarter of a millisecond.
		spec := []schema.Spec{{Table: "triage_store", Columns: []string{"run_id", "rank", "section", "rows"}}}
		if err := schema.WithAppenders(conn, spec, func(apps []*schema.Appender) error {
			for _, name := range names {
				if err := apps[0].Append(int32(run), int32(rep.Rank), name, rep.Sections[name]); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
			return nil
		}); err != nil {
			return fail("insert: ", err)
		}
		now, err := txNow(ctx, conn)
		if err != nil {
			return fail("record: ", err)
		}
		if _, err := inline.Exec(ctx, conn, stmt("triage_store_commit"), sql.Named("run", run), sql.Named("rank", rep.Rank),
			sql.Named("min_share", rep.MinShare), sql.Named("overlap_rows", rep.OverlapRows), sql.Named("recipe", rep.Recipe), now); err != nil {
			return fail("record: ", err)
		}
		return nil
	})
}
