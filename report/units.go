package report

import (
	"math"
	"strconv"
)

// Times a person reads adapt their unit (issue 9 item 7): ns, µs, ms or s,
// with 3 significant digits, so one kernel's time reads the same in every
// table whatever its size.

var durUnits = []struct {
	div  float64
	name string
}{{1, "ns"}, {1e3, "µs"}, {1e6, "ms"}, {1e9, "s"}}

// unitFor is the index of the unit a duration is shown in: the largest
// whose value is at least 1 once rounded to 3 significant digits.
func unitFor(ns float64) int {
	u := 0
	for i := len(durUnits) - 1; i > 0; i-- {
		if math.Abs(ns)/durUnits[i].div >= 0.9995 {
			u = i
			break
		}
	}
	return u
}

// decimals gives v 3 (or digits) significant digits before its unit.
func decimals(v float64, digits int) int {
	v = math.Abs(v)
	switch {
	case v >= 100:
		return max(0, digits-3)
	case v >= 10:
		return max(0, digits-2)
	}
	return digits - 1
}

// fmtDur formats nanoseconds as "850 ns", "12.3 µs", "4.02 ms", "1.25 s".
func fmtDur(ns float64) string {
	if ns == 0 {
		return "0 ns"
	}
	u := unitFor(ns)
	v := ns / durUnits[u].div
	d := decimals(v, 3)
	// 999.96 µs rounds to 1000 µs: show it as 1.00 ms
	if s := strconv.FormatFloat(v, 'f', d, 64); math.Abs(mustParse(s)) >= 1000 && u < len(durUnits)-1 {
		u++
		v = ns / durUnits[u].div
		d = decimals(v, 3)
	}
	return strconv.FormatFloat(v, 'f', d, 64) + " " + durUnits[u].name
}

// fmtDurs formats several durations in the unit of the largest, with 4
// significant digits for it, so small differences (a straggler rank)
// stay visible: "1.201 / 1.214 / 1.352 ms".
func fmtDurs(ns ...float64) []string {
	var top float64
	for _, v := range ns {
		top = max(top, math.Abs(v))
	}
	u := unitFor(top)
	d := decimals(top/durUnits[u].div, 4)
	out := make([]string, len(ns))
	for i, v := range ns {
		out[i] = strconv.FormatFloat(v/durUnits[u].div, 'f', d, 64)
	}
	out[len(out)-1] += " " + durUnits[u].name
	return out
}

func mustParse(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}
