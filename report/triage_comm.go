package report

import (
	"fmt"
	"strings"

	"github.com/tracehouse/tracehouse/queries"
)

// TriageCommOverlap is one rank's communication hidden under computation
// in a stage (comm_overlap.sql, sqllib/comm.sql: Holistic Trace
// Analysis's comm-comp overlap). Nanoseconds.
type TriageCommOverlap struct {
	Rank int64 `json:"rank"`
	// CommNS and CompNS are the union of the communication and of the
	// computation events' intervals; OverlapNS the time in both.
	CommNS    int64 `json:"comm_ns"`
	CompNS    int64 `json:"comp_ns"`
	OverlapNS int64 `json:"overlap_ns"`
	// OverlapPct is of CommNS; null without communication.
	OverlapPct *float64 `json:"overlap_pct"`
}

// addCommOverlap fills each stage's CommOverlap.
func (r *TriageReport) addCommOverlap(d *queries.TriageData, section func(string) *TriageStage) {
	for _, c := range d.CommOverlap {
		st := section(c.Stage)
		o := TriageCommOverlap{Rank: c.Rank, CommNS: c.CommNS, CompNS: c.CompNS, OverlapNS: c.OverlapNS}
		if c.OverlapPct.Valid {
			v := c.OverlapPct.Float64
			o.OverlapPct = &v
		}
		st.CommOverlap = append(st.CommOverlap, o)
	}
	for i := range r.Stages {
		if r.Stages[i].CommOverlap == nil {
			r.Stages[i].CommOverlap = []TriageCommOverlap{}
		}
	}
}

// commOverlapLine is a stage's header line; "" when no rank communicates.
func commOverlapLine(st *TriageStage) string {
	var parts []string
	for _, c := range st.CommOverlap {
		if c.OverlapPct == nil {
			continue
		}
		parts = append(parts, fmt.Sprintf("rank %d %s of %s", c.Rank, fmtPct(*c.OverlapPct), fmtDur(float64(c.CommNS))))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("Stage %s: communication hidden under computation (HTA's comm-comp overlap): %s of communication time",
		st.displayName, strings.Join(parts, ", "))
}
