package assemble

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/natural"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/stats"
	"github.com/tracehouse/tracehouse/target"
)

// HistoryOptions say which series a history follows over which runs.
type HistoryOptions struct {
	// Exactly one of Kernel (RE2 on short names), Family and Metric.
	Kernel, Family, Metric string
	Stage                  string // "" = every stage
	Rank                   int64
	Tags                   []string // key=value, every one required
	// By orders the runs by this tag's value (digit runs as numbers),
	// leaving out runs without it; "" = ingest order.
	By        string
	Last      int // keep the newest Last runs of the order; 0 = all
	Rule      stats.ChangeRule
	KeepEdges bool
	// StepsBy finds steps by a kernel that runs once per step, for this
	// history alone.
	StepsBy string
}

// History selects and orders the runs, finds again, for this history
// alone, the steps of runs whose steps were found another way than asked
// (aggregates.ReadSteps), and builds the history: what `history` prints and
// `report --history` draws. A selection that holds nothing is an error.
func History(ctx context.Context, w *schema.Warehouse, o HistoryOptions) (*analysis.HistoryReport, error) {
	rows, err := queries.RunsTagged(ctx, w.DB, o.Tags)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		if len(o.Tags) > 0 {
			return nil, fmt.Errorf("no run of %s carries %s", w.Path, strings.Join(o.Tags, " and "))
		}
		return nil, &target.EmptyError{Warehouse: w.Path}
	}
	slices.Reverse(rows) // oldest first
	var runs []analysis.HistoryRunInfo
	var untagged []string
	for _, r := range rows {
		info := analysis.HistoryRunInfo{RunID: r.RunID, Label: r.Label, IngestedAt: r.IngestedAt, Tags: r.Tags}
		if o.By != "" {
			v, ok := tagValue(r.Tags, o.By)
			if !ok {
				untagged = append(untagged, r.Label)
				continue
			}
			info.By = v
		}
		runs = append(runs, info)
	}
	if o.By != "" {
		if len(runs) == 0 {
			return nil, fmt.Errorf("no selected run carries tag %s (--by)", o.By)
		}
		slices.SortStableFunc(runs, func(a, b analysis.HistoryRunInfo) int { return natural.Compare(a.By, b.By) })
	}
	if o.Last > 0 && len(runs) > o.Last {
		runs = runs[len(runs)-o.Last:]
	}
	if err := checkHistoryRank(rows, runs, o.Rank); err != nil {
		return nil, err
	}
	if o.Family != "" {
		families, err := queries.HistoryFamilies(ctx, w.DB)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(families, o.Family) {
			return nil, fmt.Errorf("unknown family %s; families: %s", o.Family, strings.Join(families, ", "))
		}
	}
	// Steps found another way than asked are found again for this history
	// alone, as Compare does.
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.RunID
	}
	// The selected runs' GPU events, from the runs' summary (target.SmallPlans).
	var events int64
	for _, r := range rows {
		if slices.Contains(ids, r.RunID) {
			events += r.GPUEvents
		}
	}
	q, err := aggregates.ReadSteps(ctx, w.DB, ids, o.StepsBy)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	fresh, err := queries.StepsFresh(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	var freshIDs []int64
	for _, id := range ids {
		if fresh[id] {
			freshIDs = append(freshIDs, id)
		}
	}
	p := queries.HistoryStepsParams{Runs: ids, FreshRuns: freshIDs, Rank: o.Rank, KeepEdges: o.KeepEdges}
	ro := analysis.HistoryOptions{Rank: o.Rank, Stage: o.Stage, Tags: o.Tags, By: o.By, KeepEdges: o.KeepEdges, Rule: o.Rule}
	if o.Stage != "" {
		p.Stage = sql.NullString{String: o.Stage, Valid: true}
	}
	switch {
	case o.Metric != "":
		p.Metric = sql.NullString{String: o.Metric, Valid: true}
		ro.Series, ro.Match = analysis.SeriesMetric, o.Metric
	case o.Family != "":
		p.Family = sql.NullString{String: o.Family, Valid: true}
		ro.Series, ro.Match = analysis.SeriesFamily, o.Family
	default:
		p.Pattern = sql.NullString{String: o.Kernel, Valid: true}
		ro.Series, ro.Match = analysis.SeriesKernel, o.Kernel
	}
	restore, err := target.SmallPlans(ctx, w.DB, events, 0)
	if err != nil {
		return nil, err
	}
	steps, err := queries.HistorySteps(ctx, q, p)
	if err = errors.Join(err, restore()); err != nil {
		return nil, err
	}
	rep := analysis.NewHistory(runs, steps, ro)
	if !rep.HasValues() {
		where := stepsWhere(o.Stage, false, o.Rank)
		switch {
		case len(steps) == 0:
			return nil, fmt.Errorf("no selected run has %s", where)
		case o.Family != "":
			return nil, fmt.Errorf("no kernel of family %s in the selected runs' %s", o.Family, where)
		default:
			return nil, fmt.Errorf("no kernel matches %q in the selected runs' %s", o.Kernel, where)
		}
	}
	if len(untagged) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d run(s) without tag %s left out: %s", len(untagged), o.By, strings.Join(untagged, ", ")))
	}
	return rep, nil
}

// checkHistoryRank refuses a rank no selected run has (rows: the runs
// with their ranks; runs: those selected).
func checkHistoryRank(rows []queries.RunsRow, runs []analysis.HistoryRunInfo, rank int64) error {
	selected := map[int64]bool{}
	for _, r := range runs {
		selected[r.RunID] = true
	}
	var ranks []int64
	for _, r := range rows {
		if !selected[r.RunID] {
			continue
		}
		for _, rk := range r.Ranks {
			if !slices.Contains(ranks, rk) {
				ranks = append(ranks, rk)
			}
		}
	}
	if len(ranks) == 0 || slices.Contains(ranks, rank) {
		return nil
	}
	slices.Sort(ranks)
	s := make([]string, len(ranks))
	for i, r := range ranks {
		s[i] = strconv.FormatInt(r, 10)
	}
	return fmt.Errorf("no rank %d in the selected runs (ranks: %s); see --rank", rank, strings.Join(s, ", "))
}

// tagValue is the value of tag key among "key=value" tags.
func tagValue(tags []string, key string) (string, bool) {
	for _, t := range tags {
		if k, v, ok := strings.Cut(t, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}
