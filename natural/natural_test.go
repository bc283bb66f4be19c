package natural

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestCompare: hand-picked orders, then random strings against a
// reference that cuts both into digit runs (compared as numbers) and
// single other bytes.
func TestCompare(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"0.4.9", "0.4.10", -1},
		{"run2", "run10", -1},
		{"run10", "run2", 1},
		{"v1.2", "v1.2", 0},
		{"007", "7", 0},
		{"a", "a1", -1},
		{"b1", "a2", 1},
		{"", "", 0},
	} {
		if got := sign(Compare(c.a, c.b)); got != c.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		b := make([]byte, r.IntN(7))
		for i := range b {
			b[i] = "0019ab."[r.IntN(7)]
		}
		return string(b)
	}
	for range 20000 {
		a, b := word(), word()
		if got, want := sign(Compare(a, b)), naturalReference(a, b); got != want {
			t.Fatalf("Compare(%q, %q) = %d, want %d", a, b, got, want)
		}
	}
}

func naturalReference(a, b string) int {
	ta, tb := naturalTokens(a), naturalTokens(b)
	for i := 0; i < len(ta) && i < len(tb); i++ {
		x, y := ta[i], tb[i]
		xd, yd := x[0] >= '0' && x[0] <= '9', y[0] >= '0' && y[0] <= '9'
		if xd && yd {
			nx, _ := new(big.Int).SetString(x, 10)
			ny, _ := new(big.Int).SetString(y, 10)
			if c := nx.Cmp(ny); c != 0 {
				return c
			}
			continue
		}
		if x[0] != y[0] {
			if x[0] < y[0] {
				return -1
			}
			return 1
		}
	}
	return sign(len(ta) - len(tb))
}

// naturalTokens cuts s into maximal digit runs and single other bytes.
func naturalTokens(s string) []string {
	var out []string
	for s != "" {
		n := 1
		if s[0] >= '0' && s[0] <= '9' {
			for n < len(s) && s[n] >= '0' && s[n] <= '9' {
				n++
			}
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
