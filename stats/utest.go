package stats

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ExactLimit is the largest sample size (per side) for which the U test's
// p-value is exact; above it on either side the normal approximation (with
// tie and continuity correction) is used.
const ExactLimit = 20

// Method says how a p-value was obtained.
type Method string

// Methods.
const (
	// Exact: the permutation distribution of the rank sum given the ties
	// (every way of choosing which N1 of the N1+N2 values are the first
	// sample is equally likely under the null hypothesis).
	Exact Method = "exact"
	// Normal: the normal approximation with tie and continuity correction.
	Normal Method = "normal"
	// TooFew: fewer than MinSamples on a side; no test (P is NaN).
	TooFew Method = "too few"
)

// UTest is the result of a two-sided Mann-Whitney U test.
type UTest struct {
	N1, N2 int
	// U counts the pairs (x from the first sample, y from the second) with
	// x > y, plus half the pairs with x == y: 0 .. N1*N2.
	U float64
	// P is the two-sided p-value: twice the smaller tail of the statistic's
	// distribution at the observed value, at most 1. NaN when Method is
	// TooFew.
	P      float64
	Method Method
}

// Tested says a p-value was computed.
func (t UTest) Tested() bool { return t.Method != TooFew }

// MannWhitney tests whether x and y come from populations with the same
// location, two-sided. Both samples need MinSamples values, else the result
// says TooFew. The exact distribution accounts for ties (midranks), as in
// Klotz (1966), "The Wilcoxon, ties, and the computer", JASA 61:772-787;
// identical samples and constant data give P = 1.
func MannWhitney(x, y []float64) UTest {
	n1, n2 := len(x), len(y)
	res := UTest{N1: n1, N2: n2, P: math.NaN(), Method: TooFew}
	if n1 < MinSamples || n2 < MinSamples {
		if n1 > 0 && n2 > 0 {
			res.U = uStatistic(x, y)
		}
		return res
	}
	// Rank the merged sample: tie groups in value order, with 2 x midrank.
	type lv struct {
		v     float64
		first bool
	}
	all := make([]lv, 0, n1+n2)
	for _, v := range x {
		all = append(all, lv{v, true})
	}
	for _, v := range y {
		all = append(all, lv{v, false})
	}
	slices.SortFunc(all, func(a, b lv) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	var ties []int  // size of each tie group, in value order
	var twoR1 int64 // 2 x (rank sum of x)
	for i := 0; i < len(all); {
		j := i
		nx := 0
		for ; j < len(all) && all[j].v == all[i].v; j++ {
			if all[j].first {
				nx++
			}
		}
		// ranks i+1 .. j: twice the midrank is i+1+j
		twoR1 += int64(nx) * int64(i+1+j)
		ties = append(ties, j-i)
		i = j
	}
	twoU := twoR1 - int64(n1)*int64(n1+1)
	res.U = float64(twoU) / 2
	if len(ties) == 1 {
		// Every value is equal: no evidence of any difference.
		res.P, res.Method = 1, Exact
		if n1 > ExactLimit || n2 > ExactLimit {
			res.Method = Normal
		}
		return res
	}
	if n1 <= ExactLimit && n2 <= ExactLimit {
		d := rankSumDist(n1, ties)
		lo, hi := d.tails(twoR1)
		res.P, res.Method = math.Min(1, 2*math.Min(lo, hi)), Exact
		return res
	}
	// Normal approximation with tie correction and continuity correction.
	N := float64(n1 + n2)
	var tc float64
	for _, t := range ties {
		tc += float64(t)*float64(t)*float64(t) - float64(t)
	}
	mu := float64(n1) * float64(n2) / 2
	sigma := math.Sqrt(float64(n1) * float64(n2) / 12 * ((N + 1) - tc/(N*(N-1))))
	dev := math.Max(math.Abs(res.U-mu)-0.5, 0)
	z := dev / sigma
	res.P, res.Method = math.Min(1, math.Erfc(z/math.Sqrt2)), Normal
	return res
}

// uStatistic counts pairs directly (used only for the TooFew report).
func uStatistic(x, y []float64) float64 {
	var u float64
	for _, a := range x {
		for _, b := range y {
			switch {
			case a > b:
				u++
			case a == b:
				u += 0.5
			}
		}
	}
	return u
}

// dist is the null distribution of 2 x (rank sum of the first sample):
// prob[s - min] = P(2W = s).
type dist struct {
	min  int64
	prob []float64
}

// tails returns P(2W <= s) and P(2W >= s).
func (d dist) tails(s int64) (lo, hi float64) {
	for i, p := range d.prob {
		v := d.min + int64(i)
		if v <= s {
			lo += p
		}
		if v >= s {
			hi += p
		}
	}
	return lo, hi
}

var distCache sync.Map // key string -> dist

// rankSumDist is the exact distribution of twice the rank sum of n1 values
// drawn without replacement from N = sum(ties) ranked values grouped in
// ties (sizes in value order, each group carrying its midrank). Choosing a
// values of a group of size t can be done C(t, a) ways; a dynamic program
// over the groups counts the ways per (values chosen, 2 x rank sum).
// Results are cached: every untied comparison of n1 against n2 values
// shares one distribution.
func rankSumDist(n1 int, ties []int) dist {
	var kb strings.Builder
	kb.WriteString(strconv.Itoa(n1))
	for _, t := range ties {
		kb.WriteByte(',')
		kb.WriteString(strconv.Itoa(t))
	}
	key := kb.String()
	if d, ok := distCache.Load(key); ok {
		return d.(dist)
	}
	N := 0
	for _, t := range ties {
		N += t
	}
	maxS := 2 * N * n1 // 2 x rank sum never exceeds this
	// ways[j][s]: ways to choose j values with 2 x rank sum s.
	ways := make([][]float64, n1+1)
	for j := range ways {
		ways[j] = make([]float64, maxS+1)
	}
	ways[0][0] = 1
	start := 0 // ranks before the current group
	for _, t := range ties {
		twoMid := 2*start + t + 1 // ranks start+1 .. start+t
		binom := binomRow(t)
		end := start + t
		for j := min(n1, end); j >= 1; j-- { // in place, high j first
			// j values among ranks 1..end: 2 x rank sum lies in
			// [j(j+1), j(2 end - j + 1)].
			hiS := min(maxS, j*(2*end-j+1))
			for s := hiS; s >= j*(j+1); s-- {
				var acc float64
				for a := 1; a <= t && a <= j; a++ {
					prev := s - a*twoMid
					if prev < 0 {
						break
					}
					if w := ways[j-a][prev]; w != 0 {
						acc += w * binom[a]
					}
				}
				ways[j][s] += acc
			}
		}
		start += t
	}
	total := 0.0
	lo, hi := -1, -1
	for s, w := range ways[n1] {
		if w > 0 {
			total += w
			if lo < 0 {
				lo = s
			}
			hi = s
		}
	}
	d := dist{min: int64(lo), prob: make([]float64, hi-lo+1)}
	for s := lo; s <= hi; s++ {
		d.prob[s-lo] = ways[n1][s] / total
	}
	distCache.Store(key, d)
	return d
}

// binomRow returns C(t, a) for a = 0..t.
func binomRow(t int) []float64 {
	row := make([]float64, t+1)
	row[0] = 1
	for a := 1; a <= t; a++ {
		row[a] = row[a-1] * float64(t-a+1) / float64(a)
	}
	return row
}

// BenjaminiHochberg returns the Benjamini-Hochberg adjusted p-values (the
// false-discovery-rate q-values) of ps, in the same order: with the m
// p-values sorted ascending, q(i) = min over j >= i of m p(j) / j, at most
// 1. A row is significant at FDR level alpha when its q <= alpha. NaN
// entries (rows not tested) are left NaN and not counted in m.
func BenjaminiHochberg(ps []float64) []float64 {
	q := make([]float64, len(ps))
	var idx []int
	for i, p := range ps {
		q[i] = math.NaN()
		if !math.IsNaN(p) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case ps[a] < ps[b]:
			return -1
		case ps[a] > ps[b]:
			return 1
		}
		return 0
	})
	m := float64(len(idx))
	running := 1.0
	for k := len(idx) - 1; k >= 0; k-- {
		i := idx[k]
		v := ps[i] * m / float64(k+1)
		running = math.Min(running, v)
		q[i] = running
	}
	return q
}
