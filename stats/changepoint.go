package stats

import (
	"math"
	"slices"
)

// MADScale turns a median absolute deviation into an estimate of the
// standard deviation of normally distributed data (1 / Φ⁻¹(3/4)).
const MADScale = 1.4826

// ChangeRule is the change-point rule of `tracehouse history`
// (README "History: when did it get slow"): a run departs from the runs before it when its
// value is farther from the rolling median of the previous Window values
// than Threshold says.
type ChangeRule struct {
	// Window is how many previous values the rolling median and the noise
	// are taken over (fewer at the start of the series).
	Window int
	// MinHistory is how many previous values a value needs to be tested;
	// the first MinHistory values of a series are never marked.
	MinHistory int
	// K is how many noise units (MADScale × MAD of the window) a departure
	// must exceed.
	K float64
	// MinChange is the relative floor of the threshold (0.05 = 5% of the
	// rolling median): previous values that happen to agree closely must not
	// make every small wobble a change.
	MinChange float64
}

// DefaultChangeRule is history's default: the median of the previous 5
// runs, at least 3 of them, 3 noise units and at least 5%.
var DefaultChangeRule = ChangeRule{Window: 5, MinHistory: 3, K: 3, MinChange: 0.05}

// Change is what the rule says about one value of a series.
type Change struct {
	// Tested says the value had MinHistory previous values; the fields
	// below are zero otherwise.
	Tested bool
	// Reference is the median of the previous (up to Window) values.
	Reference float64
	// Noise is MADScale × the median absolute deviation of those values
	// from Reference: the spread seen between them.
	Noise float64
	// Threshold is max(K × Noise, MinChange × |Reference|).
	Threshold float64
	// Departure is +1 when value - Reference > Threshold, -1 when
	// Reference - value > Threshold, else 0.
	Departure int
	// Mark says the value is a change point: it departs, and it is not the
	// continuation of the previous value's departure (the previous value
	// departed the same way and this one is within Threshold of it), so a
	// lasting shift is marked once, at its first value, and a second shift
	// on top of it is marked again.
	Mark bool
}

// ChangePoints applies rule r to the series xs (in order; NaN values are
// not allowed) and returns one Change per value.
func ChangePoints(xs []float64, r ChangeRule) []Change {
	out := make([]Change, len(xs))
	w := max(r.Window, 1)
	for i, x := range xs {
		if i < r.MinHistory || i == 0 {
			continue
		}
		prev := slices.Clone(xs[max(0, i-w):i])
		slices.Sort(prev)
		ref := median(prev)
		dev := make([]float64, len(prev))
		for j, p := range prev {
			dev[j] = math.Abs(p - ref)
		}
		slices.Sort(dev)
		c := Change{Tested: true, Reference: ref, Noise: MADScale * median(dev)}
		c.Threshold = math.Max(r.K*c.Noise, r.MinChange*math.Abs(ref))
		switch d := x - ref; {
		case d > c.Threshold:
			c.Departure = 1
		case -d > c.Threshold:
			c.Departure = -1
		}
		if c.Departure != 0 {
			p := out[i-1]
			c.Mark = !(p.Departure == c.Departure && math.Abs(x-xs[i-1]) <= c.Threshold)
		}
		out[i] = c
	}
	return out
}
