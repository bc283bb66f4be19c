// Package natural orders strings the way people number things: digit runs
// compare as numbers (0.4.9 < 0.4.10, run2 < run10). history --by sorts its
// tag values by it. It imports nothing of tracehouse, so its test binary is
// a small one (it was in assemble, whose test binary links DuckDB).
package natural

import "strings"

// Compare orders strings with their digit runs compared as
// numbers: 0.4.9 < 0.4.10, run2 < run10; otherwise byte order.
func Compare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitsPrefix(a), digitsPrefix(b)
		if da != "" && db != "" {
			na, nb := strings.TrimLeft(da, "0"), strings.TrimLeft(db, "0")
			if c := compareInts(na, nb); c != 0 {
				return c
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			if a[0] < b[0] {
				return -1
			}
			return 1
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitsPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// compareInts compares decimal digit strings without leading zeros.
func compareInts(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
