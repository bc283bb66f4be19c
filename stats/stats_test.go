package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7, 7, 1, 9, 9, 9}, 8},
	} {
		if got := Median(c.xs); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) should be NaN")
	}
}

// TestMedianCITable checks the order statistics and coverage of the 95%
// interval against the published table of distribution-free confidence
// intervals for the median (e.g. Conover, Practical Nonparametric
// Statistics, Table A3; Hollander & Wolfe): [X(r), X(n-r+1)] with coverage
// 1 - 2 P(Binomial(n, 1/2) <= r-1).
func TestMedianCITable(t *testing.T) {
	for _, c := range []struct {
		n        int
		r        int
		coverage float64
	}{
		{6, 1, 0.96875},      // 1 - 2/64
		{7, 1, 0.984375},     // 1 - 2/128
		{8, 1, 0.9921875},    // r=2 gives 1 - 18/256 = 0.9297
		{9, 2, 0.9609375},    // 1 - 2*10/512
		{10, 2, 0.978515625}, // 1 - 2*11/1024
		{15, 4, 1 - 2*576.0/32768},
		{20, 6, 1 - 2*21700.0/1048576},
	} {
		r, cov := medianCIOrder(c.n, 0.95)
		if r != c.r || !near(cov, c.coverage, 1e-12) {
			t.Errorf("n=%d: r=%d coverage=%.6f, want r=%d coverage=%.6f", c.n, r, cov, c.r, c.coverage)
		}
	}
	// The sample: 1..10 shuffled; the interval is [X(2), X(9)] = [2, 9].
	s := Summarize([]float64{7, 3, 10, 1, 5, 9, 2, 8, 4, 6}, 0.95)
	if !s.HasCI || s.Lo != 2 || s.Hi != 9 || s.Median != 5.5 || s.N != 10 {
		t.Errorf("Summarize(1..10) = %+v", s)
	}
	if s := Summarize([]float64{1, 2, 3, 4, 5}, 0.95); s.HasCI || s.Median != 3 {
		t.Errorf("5 values must have no interval: %+v", s)
	}
	if s := Summarize([]float64{6, 1, 5, 2, 4, 3}, 0.95); !s.HasCI || s.Lo != 1 || s.Hi != 6 {
		t.Errorf("6 values: interval is [min, max]: %+v", s)
	}
}

// TestMannWhitneySmallestP: fully separated samples reach the smallest
// possible p: 2/C(6,3) = 0.1 with 3 a side (so 3 is "too few"), 2/C(8,4)
// with 4 and 2/C(10,5) with 5.
func TestMannWhitneySmallestP(t *testing.T) {
	if r := MannWhitney([]float64{1, 2, 3}, []float64{4, 5, 6}); r.Tested() || r.U != 0 {
		t.Errorf("3 a side must not be tested: %+v", r)
	}
	for n, want := range map[int]float64{4: 2.0 / 70, 5: 2.0 / 252, 6: 2.0 / 924} {
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i] = float64(i), float64(100+i)
		}
		r := MannWhitney(x, y)
		if r.Method != Exact || !near(r.P, want, 1e-12) || r.U != 0 {
			t.Errorf("n=%d separated: %+v, want p=%v", n, r, want)
		}
		r = MannWhitney(y, x)
		if !near(r.P, want, 1e-12) || r.U != float64(n*n) {
			t.Errorf("n=%d separated, swapped: %+v", n, r)
		}
	}
}

// TestMannWhitneyPublished is R's documented example (?wilcox.test, from
// Hollander & Wolfe 1973, p. 69): W = 35, one-sided p = 0.1272, so the
// two-sided p is 0.2544.
func TestMannWhitneyPublished(t *testing.T) {
	x := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	y := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	r := MannWhitney(x, y)
	if r.U != 35 || r.Method != Exact || !near(r.P, 0.2544, 0.00005) {
		t.Errorf("got %+v, want U=35 p=0.2544", r)
	}
}

// bruteForce enumerates every way of splitting the pooled values into a
// first sample of len(x) and the rest, counts U by comparing pairs (no
// ranks), and returns the two-sided p: twice the smaller tail at the
// observed U. An independent check of the exact distribution with ties.
func bruteForce(x, y []float64) (u, p float64) {
	pool := append(append([]float64{}, x...), y...)
	n1, N := len(x), len(pool)
	obs := uStatistic(x, y)
	var le, ge, total float64
	var rec func(start int, chosen []int)
	rec = func(start int, chosen []int) {
		if len(chosen) == n1 {
			in := make([]bool, N)
			for _, c := range chosen {
				in[c] = true
			}
			var a, b []float64
			for i, v := range pool {
				if in[i] {
					a = append(a, v)
				} else {
					b = append(b, v)
				}
			}
			uu := uStatistic(a, b)
			total++
			if uu <= obs {
				le++
			}
			if uu >= obs {
				ge++
			}
			return
		}
		for i := start; i <= N-(n1-len(chosen)); i++ {
			rec(i+1, append(chosen, i))
		}
	}
	rec(0, nil)
	return obs, math.Min(1, 2*math.Min(le, ge)/total)
}

func TestMannWhitneyExactWithTies(t *testing.T) {
	cases := [][2][]float64{
		{{1, 2, 2, 3, 5}, {2, 3, 3, 4, 6, 6}},
		{{0, 0, 0, 7, 8}, {0, 0, 9, 9, 9}},
		{{10, 10, 10, 10}, {10, 10, 11, 12}},
		{{5, 5, 6, 6, 7, 7, 8}, {1, 1, 5, 5, 6, 6}},
		{{3, 1, 4, 1, 5, 9, 2, 6}, {5, 3, 5, 8, 9, 7, 9, 3}},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for k := 0; k < 20; k++ {
		n1, n2 := 4+rng.IntN(4), 4+rng.IntN(4)
		x, y := make([]float64, n1), make([]float64, n2)
		for i := range x {
			x[i] = float64(rng.IntN(5))
		}
		for i := range y {
			y[i] = float64(rng.IntN(5) + rng.IntN(2))
		}
		cases = append(cases, [2][]float64{x, y})
	}
	for _, c := range cases {
		u, p := bruteForce(c[0], c[1])
		r := MannWhitney(c[0], c[1])
		if r.U != u || r.Method != Exact || !near(r.P, p, 1e-9) {
			t.Errorf("x=%v y=%v: got U=%v p=%v (%s), brute force U=%v p=%v", c[0], c[1], r.U, r.P, r.Method, u, p)
		}
	}
	if r := MannWhitney([]float64{2, 2, 2, 2}, []float64{2, 2, 2, 2, 2}); r.P != 1 {
		t.Errorf("constant data: p=%v, want 1", r.P)
	}
}

// TestMannWhitneyNormal: above ExactLimit the normal approximation is used;
// hand-computed for a tied sample, and close to the exact distribution for
// an untied one.
func TestMannWhitneyNormal(t *testing.T) {
	// 21 values a side: x = 21 zeros; y = 11 zeros and 10 ones. Ties: 32
	// zeros, 10 ones. U (x over y) counts half of the 21*11 zero-zero pairs:
	// 115.5; mu = 220.5; sigma^2 = 21*21/12 * (43 - (32^3-32 + 10^3-10)/(42*41))
	// = 36.75 * (43 - 33726/1722) = 36.75 * 23.41463...
	x, y := make([]float64, 21), make([]float64, 21)
	for i := 11; i < 21; i++ {
		y[i] = 1
	}
	r := MannWhitney(x, y)
	sigma := math.Sqrt(36.75 * (43 - 33726.0/1722))
	z := (220.5 - 115.5 - 0.5) / sigma
	want := math.Erfc(z / math.Sqrt2)
	if r.Method != Normal || r.U != 115.5 || !near(r.P, want, 1e-12) {
		t.Errorf("got %+v, want U=115.5 p=%v", r, want)
	}
	// 25 a side, no ties, interleaved with a shift: compare with the exact
	// distribution computed by the same dynamic program.
	a, b := make([]float64, 25), make([]float64, 25)
	for i := range a {
		a[i] = float64(2 * i)
		b[i] = float64(2*i+1) + 9
	}
	r = MannWhitney(a, b)
	ties := make([]int, 50)
	for i := range ties {
		ties[i] = 1
	}
	lo, hi := rankSumDist(25, ties).tails(int64(2*r.U) + 25*26)
	exact := math.Min(1, 2*math.Min(lo, hi))
	if r.Method != Normal || !near(r.P, exact, 0.002) {
		t.Errorf("normal p=%v, exact p=%v", r.P, exact)
	}
}

// TestBenjaminiHochberg against R's p.adjust(p, "BH").
func TestBenjaminiHochberg(t *testing.T) {
	for _, c := range []struct{ p, want []float64 }{
		// p.adjust(c(0.01, 0.04, 0.03, 0.005), "BH") = 0.02 0.04 0.04 0.02
		{[]float64{0.01, 0.04, 0.03, 0.005}, []float64{0.02, 0.04, 0.04, 0.02}},
		// p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), "BH") = all 0.05
		{[]float64{0.01, 0.02, 0.03, 0.04, 0.05}, []float64{0.05, 0.05, 0.05, 0.05, 0.05}},
		// p.adjust(c(0.5, 0.001, 0.9), "BH") = 0.75 0.003 0.9
		{[]float64{0.5, 0.001, 0.9}, []float64{0.75, 0.003, 0.9}},
		// untested rows stay out of m
		{[]float64{math.NaN(), 0.02, 0.04}, []float64{math.NaN(), 0.04, 0.04}},
	} {
		got := BenjaminiHochberg(c.p)
		for i := range got {
			if math.IsNaN(c.want[i]) != math.IsNaN(got[i]) || !math.IsNaN(got[i]) && !near(got[i], c.want[i], 1e-12) {
				t.Errorf("BH(%v) = %v, want %v", c.p, got, c.want)
				break
			}
		}
	}
}
