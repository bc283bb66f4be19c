package report

import (
	"database/sql"
	"fmt"
	"strconv"

	"github.com/tracehouse/tracehouse/queries"
)

// Launch overhead (issue 37 item 2): per kernel, the launch-to-start delay
// and the launch call's duration; per stage, the short and launch-bound
// events. Every figure is a row of launch_by_kernel.sql or
// launch_by_stage.sql (sqllib/launch.sql defines them).

// TriageLaunchFigures are the launch-to-start delay (the event's start
// minus its launch call's end) and the launch call's duration over the
// launched events, in ns; null when none was launched (graph replays).
type TriageLaunchFigures struct {
	DelayP50NS  *float64 `json:"delay_p50_ns"`
	DelayP90NS  *float64 `json:"delay_p90_ns"`
	DelayMaxNS  *int64   `json:"delay_max_ns"`
	LaunchP50NS *float64 `json:"launch_call_p50_ns"`
	LaunchMaxNS *int64   `json:"launch_call_max_ns"`
}

// TriageKernelLaunch is one kernel's launch overhead.
type TriageKernelLaunch struct {
	// Launched counts its events with a launch of their own (not replayed
	// by a graph); LaunchBound those shorter than their launch call;
	// Short its events under the stage's short threshold (10 µs).
	Launched    int64 `json:"launched"`
	LaunchBound int64 `json:"launch_bound"`
	Short       int64 `json:"short"`
	TriageLaunchFigures
}

// TriageLaunch is a stage's launch overhead.
type TriageLaunch struct {
	Events   int64 `json:"events"`
	Launched int64 `json:"launched"`
	// Short counts the events under ShortNS; ShortPct is of Events.
	ShortNS  int64   `json:"short_ns"`
	Short    int64   `json:"short"`
	ShortPct float64 `json:"short_pct"`
	// LaunchBound counts the launched events shorter than their launch
	// call; LaunchBoundPct is of Launched (null when none was).
	LaunchBound    int64    `json:"launch_bound"`
	LaunchBoundPct *float64 `json:"launch_bound_pct"`
	TriageLaunchFigures
}

func launchFigures(f queries.LaunchFigures) TriageLaunchFigures {
	fl := func(v sql.NullFloat64) *float64 {
		if !v.Valid {
			return nil
		}
		x := v.Float64
		return &x
	}
	return TriageLaunchFigures{DelayP50NS: fl(f.DelayP50NS), DelayP90NS: fl(f.DelayP90NS), DelayMaxNS: optInt(f.DelayMaxNS),
		LaunchP50NS: fl(f.LaunchP50NS), LaunchMaxNS: optInt(f.LaunchMaxNS)}
}

// addLaunch fills each stage's Launch and each shown kernel's Launch.
func (r *TriageReport) addLaunch(d *queries.TriageData, section func(string) *TriageStage) {
	for _, s := range d.LaunchStages {
		l := &TriageLaunch{Events: s.Events, Launched: s.Launched, ShortNS: s.ShortNS, Short: s.Short, ShortPct: s.ShortPct,
			LaunchBound: s.LaunchBound, TriageLaunchFigures: launchFigures(s.LaunchFigures)}
		if s.LaunchBoundPct.Valid {
			v := s.LaunchBoundPct.Float64
			l.LaunchBoundPct = &v
		}
		section(s.Stage).Launch = l
	}
	type key struct{ stage, kernel string }
	byKernel := map[key]*TriageKernelLaunch{}
	for _, k := range d.LaunchKernels {
		byKernel[key{k.Stage, k.ShortName}] = &TriageKernelLaunch{Launched: k.Launched, LaunchBound: k.LaunchBound,
			Short: k.Short, TriageLaunchFigures: launchFigures(k.LaunchFigures)}
	}
	for i := range r.Stages {
		st := &r.Stages[i]
		for j := range st.Kernels {
			st.Kernels[j].Launch = byKernel[key{st.Stage, st.Kernels[j].Kernel}]
		}
	}
}

// launchLine is a stage's launch overhead in one line; "" without figures.
func launchLine(st *TriageStage) string {
	l := st.Launch
	if l == nil || l.Events == 0 {
		return ""
	}
	s := fmt.Sprintf("Launch overhead: %d of %d GPU events (%s) ran under %s", l.Short, l.Events, fmtPct(l.ShortPct),
		fmtDur(float64(l.ShortNS)))
	if l.LaunchBoundPct == nil {
		return s + "; none has a launch of its own (graph replays)"
	}
	s += fmt.Sprintf("; %d of %d launched (%s) ran shorter than their launch call (launch-bound)", l.LaunchBound, l.Launched,
		fmtPct(*l.LaunchBoundPct))
	if l.DelayP50NS != nil && l.LaunchP50NS != nil {
		s += fmt.Sprintf("; launch-to-start delay median %s, p90 %s; launch call median %s", fmtDur(*l.DelayP50NS),
			fmtDur(*l.DelayP90NS), fmtDur(*l.LaunchP50NS))
	}
	return s
}

// launchColumns are the kernel table's launch columns: only full output
// (--wide, markdown, HTML) shows them.
func launchColumns() []Column {
	return []Column{{Name: "Delay p50", Right: true, Wide: true}, {Name: "Delay p90", Right: true, Wide: true},
		{Name: "Delay max", Right: true, Wide: true}, {Name: "Launch call p50", Right: true, Wide: true},
		{Name: "Launch-bound", Right: true, Wide: true}}
}

// launchCells are a kernel's cells under launchColumns; "-" where it has
// no launched event.
func launchCells(k TriageKernel) []string {
	l := k.Launch
	if l == nil || l.Launched == 0 || l.DelayP50NS == nil {
		return []string{"-", "-", "-", "-", "-"}
	}
	return []string{fmtDur(*l.DelayP50NS), fmtDur(*l.DelayP90NS), fmtDur(float64(*l.DelayMaxNS)), fmtDur(*l.LaunchP50NS),
		strconv.FormatInt(l.LaunchBound, 10) + "/" + strconv.FormatInt(l.Launched, 10)}
}

// launchCSV are a kernel's launch cells in the CSV kernels table, exact
// (ns); empty where there is no figure.
func launchCSV(l *TriageKernelLaunch) []string {
	if l == nil {
		return make([]string, 8)
	}
	f := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'g', -1, 64)
	}
	n := func(v *int64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatInt(*v, 10)
	}
	return []string{strconv.FormatInt(l.Launched, 10), strconv.FormatInt(l.LaunchBound, 10), strconv.FormatInt(l.Short, 10),
		f(l.DelayP50NS), f(l.DelayP90NS), n(l.DelayMaxNS), f(l.LaunchP50NS), n(l.LaunchMaxNS)}
}
