package host

import (
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	s := parseStat("cpu  3416689 3573 593196 9035894 27333 0 12359 88441 7 9")
	want := Sample{steal: 88441, total: 3416689 + 3573 + 593196 + 9035894 + 27333 + 0 + 12359 + 88441, ok: true}
	if s != want {
		t.Fatalf("parseStat = %+v, want %+v", s, want)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4 5 6 7 8", "cpu 1 2 3 4 5 6 7", "cpu 1 2 x 4 5 6 7 8"} {
		if got := parseStat(bad); got.ok {
			t.Errorf("parseStat(%q) = %+v, want not ok", bad, got)
		}
	}
}

func TestBusy(t *testing.T) {
	t.Parallel()
	if got := (Sample{}).Busy(); !strings.HasPrefix(got, "steal ?, load average ") {
		t.Errorf("Busy of an empty sample = %q", got)
	}
}
