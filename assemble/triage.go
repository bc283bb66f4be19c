package assemble

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/target"
	"github.com/tracehouse/tracehouse/vocab"
)

// TriageOptions choose what each section of a triage report shows (the
// flags of triage, and of report for every run it holds).
type TriageOptions struct {
	// Stage is prefill, decode, mixed, unknown, or "" for every stage.
	Stage string
	// Rank is the rank shown; RankAll sums every rank and adds the spread.
	Rank    int64
	RankAll bool
	// RankSet says the rank was asked for: a run without GPU events there
	// is an error, where otherwise its lowest rank with events is shown.
	RankSet     bool
	MinShare    float64
	OverlapRows int
	// Timelines around the longest instance of the first N overlap rows.
	Timelines int
	// Framework is taken for traces that do not say theirs ("" or "auto":
	// the traces').
	Framework string

	// Tests' seams: the GPU events up to which a computed report is
	// computed with the large-input optimizers off (target.SmallPlans'
	// bound; 0: aggregates.SmallRunEvents), and the computation (nil:
	// queries.Triage).
	planBound int64
	compute   func(context.Context, queries.Querier, queries.TriageParams) (*queries.TriageData, error)
}

// Triage builds the triage report of run (two-trace mode: of run, the
// formal trace, with mapping for the kernels' Python sites).
func Triage(ctx context.Context, w *schema.Warehouse, run target.Run, mapping *target.Run, o TriageOptions) (*report.TriageReport, error) {
	p := queries.TriageParams{Run: run.ID, Stage: sql.NullString{String: o.Stage, Valid: o.Stage != ""},
		MinShare: o.MinShare, OverlapRows: o.OverlapRows, Timelines: o.Timelines}
	if o.Framework != "" && o.Framework != "auto" {
		// for traces that do not say theirs: the catalog statuses follow it
		p.Framework = sql.NullString{String: o.Framework, Valid: true}
	}
	if mapping != nil {
		p.Mapping = sql.NullInt64{Int64: mapping.ID, Valid: true}
	}
	var note string
	var d *queries.TriageData
	if !o.RankAll {
		var saved *queries.TriageData
		var savedRank int64
		if savable(w, mapping, o, p) {
			var err error
			if savedRank, saved, err = triageSaved(ctx, w, p); err != nil {
				return nil, err
			}
		}
		// The header shows the events Rank picks from: read once (or
		// taken from the saved report, current with them).
		var events []queries.TriageGPUEventsRow
		if saved != nil {
			events = saved.GPUEvents
		} else {
			var err error
			if events, err = queries.TriageGPUEvents(ctx, w.DB, run.ID); err != nil {
				return nil, err
			}
		}
		p.GPUEvents = events
		rank, fellBack, err := target.RankOf(events, run, o.Rank, o.RankSet)
		if err != nil {
			return nil, fmt.Errorf("%w; see --rank", err)
		}
		if fellBack {
			note = fmt.Sprintf("run %s has no GPU events on rank %d: showing rank %d (--rank all sums every rank)", run.Label, o.Rank, rank)
		}
		p.Rank = sql.NullInt64{Int64: rank, Valid: true}
		if saved != nil && rank == savedRank {
			saved.Params = p
			d = saved
		}
	}
	if d == nil {
		var err error
		if d, err = triageComputed(ctx, w, mapping, p, o); err != nil {
			return nil, err
		}
	}
	rep := report.NewTriage(d, report.TriageOptions{Framework: o.Framework})
	if note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	if o.Stage != "" && len(rep.Stages) == 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("no GPU events in stage %s", vocab.StageName(o.Stage)))
	}
	return rep, nil
}

// triageComputed computes the report p asks for, with the large-input
// optimizers off when the run (and the mapping run) are small
// (target.SmallPlans): their GPU events are p's when read already, else read
// here and handed on (queries.Triage would read the run's).
func triageComputed(ctx context.Context, w *schema.Warehouse, mapping *target.Run, p queries.TriageParams, o TriageOptions) (_ *queries.TriageData, err error) {
	if p.GPUEvents == nil {
		if p.GPUEvents, err = queries.TriageGPUEvents(ctx, w.DB, p.Run); err != nil {
			return nil, err
		}
	}
	events := target.GPUEvents(p.GPUEvents)
	bound := o.planBound
	if bound == 0 {
		bound = aggregates.SmallRunEvents
	}
	if mapping != nil && events <= bound {
		m, err := queries.TriageGPUEvents(ctx, w.DB, mapping.ID)
		if err != nil {
			return nil, err
		}
		events += target.GPUEvents(m)
	}
	restore, err := target.SmallPlans(ctx, w.DB, events, bound)
	if err != nil {
		return nil, err
	}
	compute := o.compute
	if compute == nil {
		compute = queries.Triage
	}
	d, err := compute(ctx, w.DB, p)
	if err = errors.Join(err, restore()); err != nil {
		return nil, err
	}
	return d, nil
}

// savable says whether the report asked for is one a finish saves
// (SaveTriage): one rank of a run of a warehouse file, every stage,
// single-trace, the default --min-share and --overlap-rows, no timelines,
// the traces' own frameworks. The rank is checked once it is known.
func savable(w *schema.Warehouse, mapping *target.Run, o TriageOptions, p queries.TriageParams) bool {
	return w.Lake == "" && mapping == nil && !o.RankAll && o.Stage == "" && o.Timelines == 0 && !p.Framework.Valid &&
		o.MinShare == queries.DefaultMinShare && o.OverlapRows == queries.DefaultOverlapRows
}

// triageSaved reads the run's saved report when it is current for this
// binary (queries.TriageSaved): the rank it shows and its data, nil when
// there is none.
func triageSaved(ctx context.Context, w *schema.Warehouse, p queries.TriageParams) (int64, *queries.TriageData, error) {
	recipe, err := target.TriageRecipe()
	if err != nil {
		return 0, nil, err
	}
	return queries.TriageSaved(ctx, w.DB, p, recipe)
}
