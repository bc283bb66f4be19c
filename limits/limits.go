// Package limits holds the ranges of values the warehouse stores. Ingest
// refuses a value outside them, naming where it is, rather than store
// something a later step cannot compute with: a sum or difference of two
// times that overflows 64 bits, a rank that does not fit its INTEGER column.
// It imports nothing of tracehouse, so every reader (ingest/decode, nsys)
// checks by the same rules.
package limits

import (
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MinTime and MaxTime bound every stored time in nanoseconds (after
// baseTimeNanoseconds or a session start is added): from 1933 to 2225 as
// Unix epoch times. The window is 2^63 ns wide, so that any two stored times
// subtract without overflowing int64, which the warehouse's queries do (a
// gap, an event's end minus a step's start).
const (
	MinTime = -1 << 60
	MaxTime = 1<<63 - 1<<60 - 1
)

// MaxDuration bounds one event's duration (about 146 years): two add up
// within 64 bits.
const MaxDuration = 1<<62 - 1

// MaxIndex bounds ranks, parallel ranks and GPU device indexes (2^24 - 1,
// far above any cluster): the warehouse keeps them in INTEGER columns and
// computes with them (a world size is the largest rank + 1).
const MaxIndex = 1<<24 - 1

// MaxTotal bounds the summed duration of one kind of event (GPU events,
// runtime calls, CPU ops, Python frames, annotations) of one trace, about
// 52 days: reports add durations up over a run in 64 bits, which then
// holds 2048 traces at this bound.
const MaxTotal = 1<<52 - 1

// AddTotal adds a duration (0 <= d <= MaxDuration) to a running total that
// stops growing past MaxTotal, so that it never overflows; a total above
// MaxTotal is over the bound.
func AddTotal(total, d int64) int64 { return min(total+d, MaxTotal+1) }

// Time reports whether ns is a time the warehouse keeps.
func Time(ns int64) bool { return ns >= MinTime && ns <= MaxTime }

// Duration reports whether ns is a duration the warehouse keeps.
func Duration(ns int64) bool { return ns >= 0 && ns <= MaxDuration }

// AddTime is a+b, and whether that is a time the warehouse keeps (false
// too when the sum overflows int64).
func AddTime(a, b int64) (int64, bool) {
	s := a + b
	if b > 0 && s < a || b < 0 && s > a {
		return 0, false
	}
	return s, Time(s)
}

// Sum is the exact decimal of a+b, overflow or not, for messages.
func Sum(a, b int64) string { return new(big.Int).Add(big.NewInt(a), big.NewInt(b)).String() }

// Index reports whether n is a rank or device index the warehouse keeps.
func Index(n int64) bool { return n >= 0 && n <= MaxIndex }

// TimeRange describes the times kept, for error messages.
var TimeRange = strconv.FormatInt(MinTime, 10) + " to " + strconv.FormatInt(MaxTime, 10) + " ns, 1933 to 2225"

// DurationRange describes the durations kept, for error messages.
var DurationRange = "at most " + strconv.FormatInt(MaxDuration, 10) + " ns, about 146 years"

// TotalRange describes the summed durations kept, for error messages.
var TotalRange = "at most " + strconv.FormatInt(MaxTotal, 10) + " ns, about 52 days, of each kind of event in one trace"

// IndexRange describes the indexes kept, for error messages.
var IndexRange = "0 to " + strconv.FormatInt(MaxIndex, 10)

// Replacement is what takes the place of each invalid UTF-8 sequence in a
// stored string (DuckDB's VARCHAR holds valid UTF-8 only).
const Replacement = "\uFFFD"

// ValidUTF8 returns b, or a copy of it with each run of invalid UTF-8
// replaced by U+FFFD; repaired says which.
func ValidUTF8(b []byte) (out []byte, repaired bool) {
	if utf8.Valid(b) {
		return b, false
	}
	return []byte(strings.ToValidUTF8(string(b), Replacement)), true
}

// ValidString is ValidUTF8 for a string.
func ValidString(s string) (out string, repaired bool) {
	if utf8.ValidString(s) {
		return s, false
	}
	return strings.ToValidUTF8(s, Replacement), true
}
