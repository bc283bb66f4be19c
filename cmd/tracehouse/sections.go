package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracehouse/tracehouse/assemble"
	"github.com/tracehouse/tracehouse/queries"
)

// Sections are the flags that choose what each triage section shows, the
// same for `triage` and `report`.
type Sections struct {
	// Stage is prefill, decode, mixed, unknown, or "" for every stage.
	Stage string
	// Rank is the rank shown; RankAll sums every rank and adds the spread.
	Rank    int64
	RankAll bool
	// RankSet says --rank was given (else rank 0, or the run's lowest).
	RankSet     bool
	MinShare    float64
	OverlapRows int
	// stage and rank are the flags' text, parsed into the fields above.
	stage, rank string
}

// defaultSections is what the flags' defaults parse to.
func defaultSections() Sections {
	return Sections{MinShare: queries.DefaultMinShare, OverlapRows: queries.DefaultOverlapRows}
}

func (s *Sections) bind(fl *pflag.FlagSet) {
	fl.StringVar(&s.stage, "stage", "all", "stage to show: prefill (extend), decode, mixed, unknown or all")
	fl.StringVar(&s.rank, "rank", "0", "rank to show, or all (sums ranks and adds a rank-spread column)")
	fl.Float64Var(&s.MinShare, "min-share", queries.DefaultMinShare, "hide kernel and overlap rows under this `PERCENT` of their stage (0 shows all)")
	fl.IntVar(&s.OverlapRows, "overlap-rows", queries.DefaultOverlapRows, "at most `N` overlap rows per stage (0 = no cap)")
}

// parse checks the flags bind defined; every mistake is a usage error.
func (s *Sections) parse(cmd *cobra.Command) error {
	var err error
	if s.Stage, err = stageFlag(s.stage); err != nil {
		return err
	}
	s.RankSet = cmd.Flags().Changed("rank")
	if s.Rank, s.RankAll, err = rankFlag(s.rank); err != nil {
		return err
	}
	if s.MinShare < 0 || s.MinShare > 100 {
		return usagef("--min-share %v: want a percentage from 0 to 100", s.MinShare)
	}
	if s.OverlapRows < 0 {
		return usagef("--overlap-rows %d: want 0 or more", s.OverlapRows)
	}
	return nil
}

// triage is what the sections show, for assemble.Triage, with the framework
// taken for traces that do not say theirs and the timelines to draw.
func (s Sections) triage(framework string, timelines int) assemble.TriageOptions {
	return assemble.TriageOptions{Stage: s.Stage, Rank: s.Rank, RankAll: s.RankAll, RankSet: s.RankSet,
		MinShare: s.MinShare, OverlapRows: s.OverlapRows, Framework: framework, Timelines: timelines}
}
