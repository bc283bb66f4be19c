package report

import (
	"bytes"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/queries"
)

// TestTriageStraggler: the rank and site rows land on their stage as
// given (a stage without rows has none), text, markdown and CSV say them,
// and the JSON fields are pinned.
func TestTriageStraggler(t *testing.T) {
	t.Parallel()
	d := triageData(sql.NullInt64{}, false)
	d.StragglerRanks = []queries.StragglerRankRow{
		{Stage: "decode", Rank: 0, Collectives: 4, WaitNS: 1200},
		{Stage: "decode", Rank: 1, Collectives: 4, Last: 3, LastPct: 75, CausedWaitNS: 2_500_000, WaitNS: 350, Straggler: true},
	}
	d.StragglerSites = []queries.StragglerSiteRow{
		{Stage: "decode", Kernel: "ncclDevKernel_AllReduce_Sum_bf16", Site: sql.NullString{String: "all_reduce @ ps.py:637", Valid: true},
			Collectives: 3, Steps: 2, Ranks: 2, LastRank: sql.NullInt64{Int64: 1, Valid: true}, Last: 3, WaitNS: 1750,
			SkewP50NS: 400, SkewMaxNS: 500},
		{Stage: "decode", Kernel: "ncclDevKernel_AllGather", Collectives: 1, Steps: 1, Ranks: 2},
	}
	r := NewTriage(d, TriageOptions{})
	if r.Stages[0].Straggler != nil {
		t.Errorf("prefill has a straggler section: %+v", r.Stages[0].Straggler)
	}
	s := r.Stages[1].Straggler
	if s == nil || s.Rank == nil || *s.Rank != 1 || len(s.Ranks) != 2 || len(s.Sites) != 2 || s.Sites[1].LastRank != nil {
		t.Fatalf("decode %+v", s)
	}
	var text, md bytes.Buffer
	if err := Render(&text, Text, r.Doc(Text)); err != nil {
		t.Fatal(err)
	}
	if err := Render(&md, Markdown, r.Doc(Markdown)); err != nil {
		t.Fatal(err)
	}
	line := "Rank 1 arrives last at 3 of 4 collectives (75.0%); the other ranks wait 2.50 ms for it in all"
	for _, out := range []string{text.String(), md.String()} {
		for _, want := range []string{"Straggler rank", line, "3 (75.0%)", "rank 1 (3)", "1.75 µs", "400 ns", "all_reduce @ ps.py:637"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	}
	csv := map[string]*Table{}
	for _, tb := range r.CSVTables() {
		csv[tb.Name] = tb
	}
	if rt := csv["r1.decode.straggler_ranks"]; rt == nil ||
		!slices.Equal(rt.Rows[1], []string{"1", "4", "3", "75", "2500000", "350", "true"}) {
		t.Errorf("csv ranks %+v", rt)
	}
	if st := csv["r1.decode.straggler_sites"]; st == nil ||
		!slices.Equal(st.Rows[1], []string{"ncclDevKernel_AllGather", "", "1", "1", "2", "", "0", "0", "0", "0"}) {
		t.Errorf("csv sites %+v", st)
	}
	if _, ok := csv["r1.prefill.straggler_ranks"]; ok {
		t.Error("prefill has a straggler CSV table")
	}
	names := jsonKeyPaths(t, r, "stages[].straggler")
	want := []string{"stages[].straggler", "stages[].straggler.rank", "stages[].straggler.ranks",
		"stages[].straggler.ranks[].caused_wait_ns", "stages[].straggler.ranks[].collectives", "stages[].straggler.ranks[].last",
		"stages[].straggler.ranks[].last_pct", "stages[].straggler.ranks[].rank", "stages[].straggler.ranks[].straggler",
		"stages[].straggler.ranks[].wait_ns", "stages[].straggler.sites", "stages[].straggler.sites[].collectives",
		"stages[].straggler.sites[].kernel", "stages[].straggler.sites[].last", "stages[].straggler.sites[].last_rank",
		"stages[].straggler.sites[].ranks", "stages[].straggler.sites[].site", "stages[].straggler.sites[].skew_max_ns",
		"stages[].straggler.sites[].skew_p50_ns", "stages[].straggler.sites[].steps", "stages[].straggler.sites[].wait_ns"}
	if !slices.Equal(names, want) {
		t.Errorf("straggler JSON fields:\n got %v\nwant %v", names, want)
	}
	// Every rank at one instant: no straggler, and the line says so.
	d.StragglerRanks = []queries.StragglerRankRow{{Stage: "decode", Rank: 0, Collectives: 1}, {Stage: "decode", Rank: 1, Collectives: 1}}
	d.StragglerSites = d.StragglerSites[1:]
	r = NewTriage(d, TriageOptions{})
	if s := r.Stages[1].Straggler; s == nil || s.Rank != nil || !strings.HasPrefix(stragglerLine(s), "No rank arrives after another") {
		t.Errorf("no straggler: %+v", s)
	}
}
