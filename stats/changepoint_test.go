package stats

import (
	"slices"
	"testing"
)

func marks(cs []Change) []int {
	var out []int
	for i, c := range cs {
		if c.Mark {
			out = append(out, i)
		}
	}
	return out
}

// TestChangePoints checks the rule's marks on series whose references,
// noise and thresholds were worked out by hand (see the comments).
func TestChangePoints(t *testing.T) {
	for _, c := range []struct {
		name string
		xs   []float64
		want []int
	}{
		// A lasting step at index 6: marked once. At 6 the previous five
		// are 102 99 101 100 98 (median 100, MAD 1, threshold max(3 x
		// 1.4826, 5) = 5) and 120 departs by 20. At 7 the median is still
		// 100 and 121 departs, but 120 departed the same way and 121 is
		// within 5 of it. At 8: window 101 100 98 120 121, median 101, MAD
		// 3, threshold 13.34; 119 departs by 18, within 13.34 of 121. At
		// 9: median 119, no departure.
		{"step", []float64{100, 102, 99, 101, 100, 98, 120, 121, 119, 120}, []int{6}},
		// A one-run spike: the runs after it are measured against the
		// median of windows that hold it once, 100, and do not depart.
		{"spike", []float64{100, 102, 99, 101, 100, 98, 120, 100, 101, 99}, []int{6}},
		// Two steps in a row: 140 departs from 100 and is 20 (> 5) away
		// from the 120 before it, so the second shift is marked too; the
		// next 140 continues it; at 8 the window 100 100 120 140 140 has
		// median 120 and MAD 20 (threshold 88.96).
		{"double step", []float64{100, 100, 100, 100, 100, 120, 140, 140, 140}, []int{5, 6}},
		// Noisy history: window 100 110 90 105 95, median 100, MAD 5,
		// threshold 3 x 7.413 = 22.24 > 12: no change.
		{"noisy", []float64{100, 110, 90, 105, 95, 112}, nil},
		// Faster: 40 against a median of 50 (threshold 2.5).
		{"faster", []float64{50, 50, 50, 50, 40}, []int{4}},
		// 4% against a 5% floor with no noise: not a change.
		{"under floor", []float64{50, 50, 50, 50, 52}, nil},
		// A kernel that appears: reference 0, threshold 0.
		{"appears", []float64{0, 0, 0, 0, 5}, []int{4}},
		// Too short to test anything.
		{"short", []float64{100, 200, 300}, nil},
	} {
		got := marks(ChangePoints(c.xs, DefaultChangeRule))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: marks %v, want %v", c.name, got, c.want)
		}
	}
}

// TestChangePointFields checks the reported reference, noise and
// threshold against hand-computed values.
func TestChangePointFields(t *testing.T) {
	cs := ChangePoints([]float64{100, 102, 99, 101, 100, 98, 120, 121, 119, 120}, DefaultChangeRule)
	for i := 0; i < 3; i++ {
		if cs[i].Tested || cs[i].Mark {
			t.Errorf("value %d tested with %d previous values", i, i)
		}
	}
	for _, c := range []struct {
		i               int
		ref, noise, thr float64
		departure       int
	}{
		// 100 102 99 -> median 100, |dev| 0 1 2 -> MAD 1
		{3, 100, 1.4826, 5, 0},
		// 100 102 99 101 -> median 100.5, |dev| .5 .5 1.5 1.5 -> MAD 1;
		// the floor 5.025 beats 3 x 1.4826 = 4.4478
		{4, 100.5, 1.4826, 5.025, 0},
		{6, 100, 1.4826, 5, 1},
		// 101 100 98 120 121 -> median 101, |dev| 0 1 3 19 20 -> MAD 3
		{8, 101, 3 * 1.4826, 9 * 1.4826, 1},
		// 100 98 120 121 119 -> median 119, |dev| 0 1 2 19 21 -> MAD 2
		{9, 119, 2 * 1.4826, 6 * 1.4826, 0},
	} {
		got := cs[c.i]
		if !got.Tested || !near(got.Reference, c.ref, 1e-9) || !near(got.Noise, c.noise, 1e-9) ||
			!near(got.Threshold, c.thr, 1e-9) || got.Departure != c.departure {
			t.Errorf("value %d: %+v, want reference %v noise %v threshold %v departure %d", c.i, got, c.ref, c.noise, c.thr, c.departure)
		}
	}
	// A window of 3 and no floor: 3 2 1 -> median 2, MAD 1, threshold 3 x
	// 1.4826 = 4.4478; 6.5 departs by 4.5.
	r := ChangeRule{Window: 3, MinHistory: 3, K: 3}
	if cs := ChangePoints([]float64{9, 3, 2, 1, 6.5}, r); !cs[4].Mark || cs[4].Reference != 2 || cs[3].Tested == false {
		t.Errorf("window 3: %+v", cs)
	}
}
