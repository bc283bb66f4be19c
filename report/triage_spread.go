package report

import (
	"strconv"

	"github.com/tracehouse/tracehouse/queries"
)

// TriageKernelSpread is one kernel's duration spread over its instances
// (kernel_spread.sql, sqllib/spread.sql), in ns: an outlier instance shows
// as a max far above p90.
type TriageKernelSpread struct {
	MinNS int64   `json:"min_ns"`
	P50NS float64 `json:"median_ns"`
	P90NS float64 `json:"p90_ns"`
	MaxNS int64   `json:"max_ns"`
	// StddevNS is the sample standard deviation; null for one instance.
	StddevNS *float64 `json:"stddev_ns"`
}

// addSpread fills each shown kernel's Spread.
func (r *TriageReport) addSpread(d *queries.TriageData) {
	type key struct{ stage, kernel string }
	by := map[key]*TriageKernelSpread{}
	for _, s := range d.Spread {
		sp := &TriageKernelSpread{MinNS: s.MinNS, P50NS: s.P50NS, P90NS: s.P90NS, MaxNS: s.MaxNS}
		if s.StddevNS.Valid {
			v := s.StddevNS.Float64
			sp.StddevNS = &v
		}
		by[key{s.Stage, s.ShortName}] = sp
	}
	for i := range r.Stages {
		st := &r.Stages[i]
		for j := range st.Kernels {
			st.Kernels[j].Spread = by[key{st.Stage, st.Kernels[j].Kernel}]
		}
	}
}

// spreadColumns are the kernel table's duration-spread columns: only full
// output (--wide, markdown, HTML) shows them.
func spreadColumns() []Column {
	return []Column{{Name: "Min", Right: true, Wide: true}, {Name: "Median", Right: true, Wide: true},
		{Name: "P90", Right: true, Wide: true}, {Name: "Max", Right: true, Wide: true}, {Name: "Stddev", Right: true, Wide: true}}
}

// spreadCells are a kernel's cells under spreadColumns.
func spreadCells(k TriageKernel) []string {
	s := k.Spread
	if s == nil {
		return []string{"-", "-", "-", "-", "-"}
	}
	sd := "-"
	if s.StddevNS != nil {
		sd = fmtDur(*s.StddevNS)
	}
	return []string{fmtDur(float64(s.MinNS)), fmtDur(s.P50NS), fmtDur(s.P90NS), fmtDur(float64(s.MaxNS)), sd}
}

// spreadCSV are a kernel's spread cells in the CSV kernels table (ns).
func spreadCSV(s *TriageKernelSpread) []string {
	if s == nil {
		return make([]string, 5)
	}
	sd := ""
	if s.StddevNS != nil {
		sd = strconv.FormatFloat(*s.StddevNS, 'g', -1, 64)
	}
	return []string{strconv.FormatInt(s.MinNS, 10), strconv.FormatFloat(s.P50NS, 'g', -1, 64),
		strconv.FormatFloat(s.P90NS, 'g', -1, 64), strconv.FormatInt(s.MaxNS, 10), sd}
}
