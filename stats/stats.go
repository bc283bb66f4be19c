// Package stats holds the few statistics `tracehouse compare` and `history`
// need to say whether a difference between two runs is real: the median and
// its distribution-free confidence interval, the two-sided Mann-Whitney U
// test (exact for small samples, ties included; normal approximation with
// tie and continuity correction for larger ones), and Benjamini-Hochberg
// adjusted p-values for the many kernel rows tested at once; and the
// change-point rule that marks where a series of per-run medians departs
// from the runs before it (ChangePoints).
//
// A sample is one value per step (never per launch: launches within a step
// are not independent). Nothing here knows about traces.
package stats

import (
	"math"
	"slices"
)

// MinSamples is the fewest samples per side the U test is run with: with 3
// a side the smallest possible two-sided p is 0.1, so nothing could ever be
// significant at 0.05; with 4 it is 0.029.
const MinSamples = 4

// MinCISamples is the fewest samples a 95% interval of the median is given
// for: with 6 the interval is [min, max] at 96.9%; with 5 no two order
// statistics reach 95%.
const MinCISamples = 6

// Median is the middle value of xs (the mean of the middle two for an even
// count); NaN for an empty sample. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return median(s)
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// Summary is a sample's median with a confidence interval of the median.
type Summary struct {
	N      int
	Median float64
	// HasCI says Lo and Hi are set: N >= MinCISamples.
	HasCI bool
	// Lo and Hi are order statistics X(r) and X(N-r+1), the narrowest such
	// pair whose coverage is at least the requested confidence.
	Lo, Hi float64
	// Confidence is the interval's exact coverage (>= the level asked for).
	Confidence float64
}

// Summarize returns the median of xs and, with at least MinCISamples
// values, the distribution-free confidence interval of the median at level
// confidence (e.g. 0.95): [X(r), X(n-r+1)] for the largest r with
// P(r <= B <= n-r) >= confidence, B ~ Binomial(n, 1/2) (the number of
// values below the population median). This is the textbook order-statistic
// interval (Conover, Practical Nonparametric Statistics, section 3.2): no
// assumption about the distribution, exact coverage.
func Summarize(xs []float64, confidence float64) Summary {
	s := Summary{N: len(xs), Median: math.NaN()}
	if len(xs) == 0 {
		return s
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	s.Median = median(sorted)
	if len(xs) < MinCISamples {
		return s
	}
	r, cov := medianCIOrder(len(xs), confidence)
	if r < 1 {
		return s
	}
	s.HasCI = true
	s.Lo, s.Hi = sorted[r-1], sorted[len(xs)-r]
	s.Confidence = cov
	return s
}

// medianCIOrder returns the largest r >= 1 such that [X(r), X(n-r+1)]
// covers the median with probability >= confidence, and that coverage:
// 1 - 2 P(B <= r-1). r is 0 when even [X(1), X(n)] falls short.
func medianCIOrder(n int, confidence float64) (int, float64) {
	best, cov := 0, 0.0
	tail := 0.0 // P(B <= r-1)
	for r := 1; 2*r <= n+1; r++ {
		tail += binomHalfPMF(n, r-1)
		c := 1 - 2*tail
		if c < confidence {
			break
		}
		best, cov = r, c
	}
	return best, cov
}

// binomHalfPMF is P(B = k) for B ~ Binomial(n, 1/2), via log-gamma so that
// it stays finite for thousands of steps.
func binomHalfPMF(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	ln, _ := math.Lgamma(float64(n + 1))
	lk, _ := math.Lgamma(float64(k + 1))
	lnk, _ := math.Lgamma(float64(n - k + 1))
	return math.Exp(ln - lk - lnk - float64(n)*math.Ln2)
}
