package report

import (
	"strings"
	"testing"
)

func TestFmtDur(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ns   float64
		want string
	}{
		{0, "0 ns"}, {850, "850 ns"}, {999, "999 ns"}, {999.6, "1.00 µs"}, {1000, "1.00 µs"},
		{12345, "12.3 µs"}, {806160, "806 µs"}, {999_960, "1.00 ms"}, {4_024_100, "4.02 ms"},
		{9_670_000, "9.67 ms"}, {123_456_789, "123 ms"}, {1_250_000_000, "1.25 s"}, {7_200_000_000_000, "7200 s"},
	} {
		if got := fmtDur(c.ns); got != c.want {
			t.Errorf("fmtDur(%v) = %q, want %q", c.ns, got, c.want)
		}
	}
	if got := strings.Join(fmtDurs(1_201_000, 1_214_000, 1_352_000), " / "); got != "1.201 / 1.214 / 1.352 ms" {
		t.Errorf("fmtDurs: %q", got)
	}
	if got := strings.Join(fmtDurs(0, 350_000, 20_500_000), " / "); got != "0.00 / 0.35 / 20.50 ms" {
		t.Errorf("fmtDurs mixed: %q", got)
	}
}
