package analysis

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/stats"
)

// series is a history of one kernel series in stage decode over runs
// r1, r2, ...: values[i] is run i's value in each of its six steps (+-1 µs
// alternately, so the median is the value), launches[i] its matching
// launches per step; a negative value gives the run no steps.
func series(values []int64, launches []int64) ([]HistoryRunInfo, []queries.HistoryStepsRow) {
	var runs []HistoryRunInfo
	var rows []queries.HistoryStepsRow
	for i, v := range values {
		id := int64(i + 1)
		runs = append(runs, HistoryRunInfo{RunID: id, Label: fmt.Sprintf("r%d", id), IngestedAt: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC)})
		if v < 0 {
			continue
		}
		for step := range int64(6) {
			ns := v * 1000
			if launches[i] > 0 {
				ns += (step%3 - 1) * 1000
			}
			rows = append(rows, queries.HistoryStepsRow{RunID: id, Stage: "decode", TraceID: id, Step: step, ValueNS: ns,
				Launches: launches[i], Steps: 6, LaunchesPerStep: float64(launches[i])})
		}
	}
	return runs, rows
}

// TestHistoryAbsent (issue 33 item 2): a run whose steps hold no matching
// kernel (value 0 in every step) and a run without steps are gaps: no
// value, never a change point, and the change points are those of the
// series without them.
func TestHistoryAbsent(t *testing.T) {
	t.Parallel()
	// r5 lost the kernel (renamed), r7 has no decode steps; r8 is 30%
	// slower than r1..r6.
	runs, rows := series([]int64{100, 101, 99, 100, 0, 100, -1, 130}, []int64{4, 4, 4, 4, 0, 4, 0, 4})
	h := NewHistory(runs, rows, HistoryOptions{Series: SeriesKernel, Match: "k", Rule: stats.DefaultChangeRule})
	if len(h.Stages) != 1 {
		t.Fatalf("stages %+v", h.Stages)
	}
	st := h.Stages[0]
	var absent []string
	for _, p := range st.Runs {
		if p.Absent != "" {
			absent = append(absent, p.Label+":"+p.Absent)
			if p.MedianNS != nil || p.Change != "" || p.ReferenceNS != nil {
				t.Errorf("%s absent with median %v, change %q, reference %v", p.Label, p.MedianNS, p.Change, p.ReferenceNS)
			}
		}
	}
	if want := []string{"r5:" + AbsentNoKernel, "r7:" + AbsentNoSteps}; !slices.Equal(absent, want) {
		t.Errorf("absent %q, want %q", absent, want)
	}
	if !slices.Equal(st.ChangePoints, []string{"r8"}) || !slices.Equal(st.Missing, []string{"r7"}) {
		t.Errorf("change points %q, missing %q; want r8, r7", st.ChangePoints, st.Missing)
	}
	// r6 is tested against r1..r4 (r5 is no value): reference 100 µs.
	if p := st.Runs[5]; p.ReferenceNS == nil || *p.ReferenceNS != 100e3 {
		t.Errorf("r6 reference %v, want 100000 ns", p.ReferenceNS)
	}
	if d, line := h.Decide(true); d != Regression || line != "regression: the newest run, r8, is slower in decode (130.0 µs against the level before r8, 100.0 µs + threshold 5.0 µs)" {
		t.Errorf("decide %v %q", d, line)
	}
	// The newest run absent: the gate cannot decide.
	runs, rows = series([]int64{100, 101, 99, 100, 0}, []int64{4, 4, 4, 4, 0})
	h = NewHistory(runs, rows, HistoryOptions{Series: SeriesKernel, Match: "k", Rule: stats.DefaultChangeRule})
	if d, line := h.Decide(true); d != CannotDecide ||
		line != "cannot decide: the newest run, r5, is absent from the series in decode (no matching kernel)" {
		t.Errorf("decide %v %q", d, line)
	}
	if d, _ := h.Decide(false); d != Pass {
		t.Errorf("without the gate: %v", d)
	}
	// A step metric of 0 is a value (no kernel is asked for).
	h = NewHistory(runs, rows, HistoryOptions{Series: SeriesMetric, Match: queries.MetricExposedComm, Rule: stats.DefaultChangeRule})
	if p := h.Stages[0].Runs[4]; p.Absent != "" || p.MedianNS == nil || *p.MedianNS != 0 {
		t.Errorf("metric of 0: %+v", p)
	}
}

// TestHistoryLevels (issue 33 item 9): the gate holds the newest run
// against the level before the last lasting shift to slower, so every run
// of a lasting +20% shift fails, not only its first; "first slower run" is
// the start of a lasting shift; a one-run spike is reported apart and does
// not fail a later run.
func TestHistoryLevels(t *testing.T) {
	t.Parallel()
	flat := []int64{100, 101, 99, 100, 100, 101}
	four := func(n int) []int64 { return slices.Repeat([]int64{4}, n) }
	for _, c := range []struct {
		name        string
		values      []int64
		firstSlower string
		spikes      []string
		regressed   bool
	}{
		// +20% from r7 on: r10 is no change point but still 20% slower.
		{"lasting", append(slices.Clone(flat), 120, 121, 119, 120), "r7", []string{}, true},
		// r7 alone is 30% slower, r8 on are back.
		{"spike", append(slices.Clone(flat), 130, 100, 101, 100), "", []string{"r7"}, false},
		// +20% at r7, back at r10: faster change point, within the level.
		{"recovered", append(slices.Clone(flat), 120, 121, 119, 100, 101), "r7", []string{}, false},
		// the newest run is the change point: a spike or a shift, it fails.
		{"newest", append(slices.Clone(flat), 125), "r7", []string{}, true},
		// a spike, then a lasting shift: when it got slow is the shift.
		{"spike then shift", append(slices.Clone(flat), 130, 100, 100, 118, 119, 118), "r10", []string{"r7"}, true},
	} {
		runs, rows := series(c.values, four(len(c.values)))
		h := NewHistory(runs, rows, HistoryOptions{Series: SeriesKernel, Match: "k", Rule: stats.DefaultChangeRule})
		st := h.Stages[0]
		first := ""
		if st.FirstSlower != nil {
			first = *st.FirstSlower
		}
		if first != c.firstSlower || !slices.Equal(st.Spikes, c.spikes) {
			t.Errorf("%s: first slower %q, spikes %q; want %q, %q (change points %q)", c.name, first, st.Spikes, c.firstSlower,
				c.spikes, st.ChangePoints)
		}
		d, line := h.Decide(true)
		if (d == Regression) != c.regressed {
			t.Errorf("%s: decision %v (%q), want regressed %v; gate %+v", c.name, d, line, c.regressed, st.Gate)
		}
	}
}
