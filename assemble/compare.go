package assemble

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/target"
)

// Gates are the verdict's gates: what makes compare say "regression"
// and exit 1 (README "Comparing runs").
type Gates struct {
	Threshold       float64 // step or busy time growth per step that matters, %
	KernelThreshold float64 // kernel time growth per step that matters, %
	MinDeltaUS      float64 // and a kernel must grow by more than this, µs per step
	Alpha           float64 // significance level (FDR across a stage's kernel rows)
}

// DefaultGates are the gates compare uses unless told otherwise (its
// flags' defaults, report --compare, capture --then compare).
func DefaultGates() Gates {
	return Gates{Threshold: 5, KernelThreshold: 10, MinDeltaUS: 1, Alpha: 0.05}
}

// CompareOptions are what a comparison reads and how it decides.
type CompareOptions struct {
	Stage   string // "" = every stage
	Rank    int64
	RankAll bool
	RankSet bool // the rank was asked for: no falling back to a run's lowest
	Gates
	// AllowUntested lets the thresholds alone decide a stage with too few
	// steps to test.
	AllowUntested bool
	// Strict refuses runs that are not comparable (*NotComparableError).
	Strict    bool
	KeepEdges bool
	// StepsBy finds steps by a kernel that runs once per step, for this
	// comparison alone.
	StepsBy string
}

// SameRunError is BASE and CANDIDATE naming one run.
type SameRunError struct{ Base, Candidate, Label string }

func (e *SameRunError) Error() string {
	return fmt.Sprintf("BASE %s and CANDIDATE %s are the same run (%s): nothing to compare", e.Base, e.Candidate, e.Label)
}

// NotComparableError is a strict comparison of runs that differ in what
// makes them comparable.
type NotComparableError struct{ Mismatches []string }

func (e *NotComparableError) Error() string {
	return "--strict: the runs are not comparable: " + strings.Join(e.Mismatches, "; ")
}

// Compare compares two runs (baseArg and candArg are the arguments that
// named them, for messages): it finds their steps again for this
// comparison alone when they were found another way than asked
// (aggregates.ReadSteps: the warehouse is not written), reads both sides and
// decides (analysis.NewCompare).
func Compare(ctx context.Context, w *schema.Warehouse, base, cand target.Run, baseArg, candArg string, o CompareOptions) (*analysis.CompareReport, error) {
	if base.ID == cand.ID {
		return nil, &SameRunError{Base: baseArg, Candidate: candArg, Label: base.Label}
	}
	q, err := aggregates.ReadSteps(ctx, w.DB, []int64{base.ID, cand.ID}, o.StepsBy)
	if err != nil {
		return nil, err
	}
	defer q.Close()

	ropt := analysis.CompareOptions{Alpha: o.Alpha, ThresholdPct: o.Threshold, KernelThreshold: o.KernelThreshold,
		MinDeltaNS: o.MinDeltaUS * 1000, MinSharePct: 1, Stage: o.Stage, RankAll: o.RankAll, KeepEdges: o.KeepEdges,
		AllowUntested: o.AllowUntested}
	// Both runs' GPU events (which ranks have some, and whether both
	// runs are small: target.SmallPlans).
	events := map[int64][]queries.TriageGPUEventsRow{}
	var total int64
	for _, r := range []target.Run{base, cand} {
		if events[r.ID], err = queries.TriageGPUEvents(ctx, q, r.ID); err != nil {
			return nil, err
		}
		total += target.GPUEvents(events[r.ID])
	}
	var notes []string
	side := func(r target.Run) (*queries.CompareSide, error) {
		p := queries.CompareParams{Run: r.ID, KeepEdges: o.KeepEdges}
		if !o.RankAll {
			rank, fellBack, err := target.RankOf(events[r.ID], r, o.Rank, o.RankSet)
			if err != nil {
				return nil, fmt.Errorf("%w; see --rank", err)
			}
			if fellBack {
				notes = append(notes, fmt.Sprintf("run %s has no GPU events on rank %d: comparing its rank %d", r.Label, o.Rank, rank))
			}
			p.Rank = sql.NullInt64{Int64: rank, Valid: true}
			ropt.Rank = rank
		}
		return queries.CompareFetch(ctx, q, p, p.Rank)
	}
	restore, err := target.SmallPlans(ctx, w.DB, total, 0)
	if err != nil {
		return nil, err
	}
	bs, err := side(base)
	var cs *queries.CompareSide
	if err == nil {
		cs, err = side(cand)
	}
	if err = errors.Join(err, restore()); err != nil {
		return nil, err
	}
	rep := analysis.NewCompare(bs, cs, ropt)
	if len(rep.Stages) == 0 {
		return nil, fmt.Errorf("neither %s nor %s has %s", base.Label, cand.Label, stepsWhere(o.Stage, o.RankAll, ropt.Rank))
	}
	rep.Notes = append(rep.Notes, notes...)
	if o.Strict && len(rep.Mismatches) > 0 {
		return nil, &NotComparableError{Mismatches: rep.Mismatches}
	}
	return rep, nil
}
