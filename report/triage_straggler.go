package report

import (
	"fmt"
	"strconv"

	"github.com/tracehouse/tracehouse/kernelname"
	"github.com/tracehouse/tracehouse/queries"
)

// The straggler rank (issue 37 item 5): with every rank shown, which rank
// arrives last at the stage's collectives and what the others wait for
// it. Every figure is a row of straggler_ranks.sql or straggler_sites.sql
// (sqllib/straggler.sql defines them).

// TriageStraggler is a stage's late rank at collectives (null unless
// every rank is shown and some collective was matched across ranks).
type TriageStraggler struct {
	// Rank is the rank that arrives last most often; null when no rank
	// ever arrived after another.
	Rank  *int64                `json:"rank"`
	Ranks []TriageStragglerRank `json:"ranks"`
	// Sites are per collective kernel and Python site, longest wait first.
	Sites []TriageStragglerSite `json:"sites"`
}

// TriageStragglerRank is one rank's part in the stage's collectives. ns.
type TriageStragglerRank struct {
	Rank        int64 `json:"rank"`
	Collectives int64 `json:"collectives"`
	// Last counts the collectives it arrived last at; LastPct is of
	// Collectives.
	Last    int64   `json:"last"`
	LastPct float64 `json:"last_pct"`
	// CausedWaitNS is what the other ranks waited at those; WaitNS what
	// it waited itself for the last arrival.
	CausedWaitNS int64 `json:"caused_wait_ns"`
	WaitNS       int64 `json:"wait_ns"`
	Straggler    bool  `json:"straggler"`
}

// TriageStragglerSite is one collective kernel from one Python site. ns.
type TriageStragglerSite struct {
	Kernel      string  `json:"kernel"`
	Site        *string `json:"site"`
	Collectives int64   `json:"collectives"`
	Steps       int64   `json:"steps"`
	Ranks       int64   `json:"ranks"`
	// LastRank arrived last most often (null: none ever did), Last times.
	LastRank *int64 `json:"last_rank"`
	Last     int64  `json:"last"`
	// WaitNS is every rank's wait for the last arrival, summed; the skew
	// is the last arrival minus the first, per collective.
	WaitNS    int64 `json:"wait_ns"`
	SkewP50NS int64 `json:"skew_p50_ns"`
	SkewMaxNS int64 `json:"skew_max_ns"`
}

// addStraggler fills each stage's Straggler.
func (r *TriageReport) addStraggler(d *queries.TriageData, section func(string) *TriageStage) {
	get := func(stage string) *TriageStraggler {
		st := section(stage)
		if st.Straggler == nil {
			st.Straggler = &TriageStraggler{Ranks: []TriageStragglerRank{}, Sites: []TriageStragglerSite{}}
		}
		return st.Straggler
	}
	for _, row := range d.StragglerRanks {
		s := get(row.Stage)
		if row.Straggler {
			rank := row.Rank
			s.Rank = &rank
		}
		s.Ranks = append(s.Ranks, TriageStragglerRank{Rank: row.Rank, Collectives: row.Collectives, Last: row.Last,
			LastPct: row.LastPct, CausedWaitNS: row.CausedWaitNS, WaitNS: row.WaitNS, Straggler: row.Straggler})
	}
	for _, row := range d.StragglerSites {
		s := get(row.Stage)
		site := TriageStragglerSite{Kernel: row.Kernel, Collectives: row.Collectives, Steps: row.Steps, Ranks: row.Ranks,
			LastRank: optInt(row.LastRank), Last: row.Last, WaitNS: row.WaitNS, SkewP50NS: row.SkewP50NS, SkewMaxNS: row.SkewMaxNS}
		if row.Site.Valid {
			v := row.Site.String
			site.Site = &v
		}
		s.Sites = append(s.Sites, site)
	}
}

// stragglerLine is the stage's one-line answer.
func stragglerLine(s *TriageStraggler) string {
	if s.Rank == nil {
		return "No rank arrives after another: every collective's ranks start at the same instant."
	}
	for _, rk := range s.Ranks {
		if rk.Straggler {
			return fmt.Sprintf("Rank %d arrives last at %d of %d collectives (%s); the other ranks wait %s for it in all",
				rk.Rank, rk.Last, rk.Collectives, fmtPct(rk.LastPct), fmtDur(float64(rk.CausedWaitNS)))
		}
	}
	return ""
}

// durCell is a time, "-" when 0.
func durCell(ns int64) string {
	if ns == 0 {
		return "-"
	}
	return fmtDur(float64(ns))
}

// stragglerRankTable is each rank's arrivals.
func stragglerRankTable(s *TriageStraggler) *Table {
	t := &Table{Name: "straggler_ranks", Columns: []Column{{Name: "Rank", Right: true}, {Name: "Collectives", Right: true},
		{Name: "Arrives last", Right: true}, {Name: "Others wait for it", Right: true}, {Name: "Waits for the last", Right: true}}}
	for _, rk := range s.Ranks {
		last := fmt.Sprintf("%d (%s)", rk.Last, fmtPct(rk.LastPct))
		t.Rows = append(t.Rows, []string{strconv.FormatInt(rk.Rank, 10), strconv.FormatInt(rk.Collectives, 10), last,
			durCell(rk.CausedWaitNS), durCell(rk.WaitNS)})
	}
	return t
}

// stragglerSiteTable is the collectives per kernel and Python site; text
// on a terminal names the kernels by their labels.
func stragglerSiteTable(s *TriageStraggler, f Format) *Table {
	t := &Table{Name: "straggler_sites", Columns: []Column{{Name: "Collective", Kernel: true},
		{Name: "Python site", Cut: CutPath, Detail: 1}, {Name: "Calls", Right: true},
		{Name: "Last most often", Short: "Last", Keep: true}, {Name: "Wait", Right: true},
		{Name: "Skew median", Short: "Skew p50", Right: true}, {Name: "Skew max", Right: true, Detail: 1}}}
	names := make([]string, len(s.Sites))
	for i, c := range s.Sites {
		names[i] = c.Kernel
	}
	labels := kernelname.Labels(names)
	for i, c := range s.Sites {
		site := "-"
		if c.Site != nil {
			site = *c.Site
		}
		last := "-"
		if c.LastRank != nil {
			last = fmt.Sprintf("rank %d (%d)", *c.LastRank, c.Last)
		}
		row := []string{c.Kernel, site, strconv.FormatInt(c.Collectives, 10), last, durCell(c.WaitNS),
			durCell(c.SkewP50NS), durCell(c.SkewMaxNS)}
		t.Rows = append(t.Rows, row)
		if f == Text {
			narrow := append([]string{labels[i]}, row[1:]...)
			t.Narrow = append(t.Narrow, narrow)
		}
	}
	return t
}

// stragglerBlocks are the "Straggler rank" section of one stage; nil when
// it has none. The definition is said under the first such section only.
func (r *TriageReport) stragglerBlocks(st *TriageStage, f Format) []any {
	if st.Straggler == nil {
		return nil
	}
	blocks := []any{Lines{stragglerLine(st.Straggler)}, stragglerRankTable(st.Straggler), stragglerSiteTable(st.Straggler, f)}
	for i := range r.Stages {
		if r.Stages[i].Straggler != nil {
			if &r.Stages[i] != st {
				return blocks
			}
			break
		}
	}
	return append(blocks, Lines{"Arrival: the start of a rank's collective kernel. Calls are matched across ranks by kernel, Python site, step and order in the step;" +
		" each rank waits from its arrival to the last one; skew: the last arrival minus the first; calls: collectives (one call on every rank)."})
}

// stragglerCSV are a stage's straggler tables for the CSV format.
func stragglerCSV(sp string, st *TriageStage) []*Table {
	s := st.Straggler
	if s == nil {
		return nil
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	ranks := &Table{Name: sp + ".straggler_ranks", Columns: cols("rank", "collectives", "last", "last_pct", "caused_wait_ns", "wait_ns", "straggler")}
	for _, rk := range s.Ranks {
		ranks.Rows = append(ranks.Rows, []string{i64(rk.Rank), i64(rk.Collectives), i64(rk.Last),
			strconv.FormatFloat(rk.LastPct, 'g', -1, 64), i64(rk.CausedWaitNS), i64(rk.WaitNS), strconv.FormatBool(rk.Straggler)})
	}
	sites := &Table{Name: sp + ".straggler_sites", Columns: cols("kernel", "site", "collectives", "steps", "ranks", "last_rank", "last",
		"wait_ns", "skew_p50_ns", "skew_max_ns")}
	for _, c := range s.Sites {
		site, last := "", ""
		if c.Site != nil {
			site = *c.Site
		}
		if c.LastRank != nil {
			last = i64(*c.LastRank)
		}
		sites.Rows = append(sites.Rows, []string{c.Kernel, site, i64(c.Collectives), i64(c.Steps), i64(c.Ranks), last, i64(c.Last),
			i64(c.WaitNS), i64(c.SkewP50NS), i64(c.SkewMaxNS)})
	}
	return []*Table{ranks, sites}
}
