package decode

import (
	"math/big"
	"strconv"
	"strings"
	"testing"
)

func TestMicrosToNanos(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1712345678901.123", 1712345678901123, true},
		{"1712345678901.1239", 1712345678901123, true},
		{"0", 0, true},
		{"12", 12000, true},
		{"12.5", 12500, true},
		{"0.001", 1, true},
		{"0.0009", 0, true},
		{"-3.25", -3250, true},
		{"1.5e3", 1500000, true},
		{"15E-1", 1500, true},
		{"1e-9", 0, true},
		{"9223372036854775.807", 9223372036854775807, true},
		{"9223372036854775.808", 0, false},
		{"1e300", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"01", 0, false},
		{"1.", 0, false},
		{".5", 0, false},
		{"1e", 0, false},
		{"NaN", 0, false},
		{"12a", 0, false},
		{"1712345678901.123456789012345", 1712345678901123, true},
	}
	for _, c := range cases {
		got, ok := MicrosToNanos([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("MicrosToNanos(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestParseInt(t *testing.T) {
	t.Parallel()
	if v, isInt, ok := ParseInt([]byte("10159970886766084423")); !isInt || ok {
		t.Errorf("uint64-sized value: %d %v %v", v, isInt, ok)
	}
	if v, isInt, ok := ParseInt([]byte("-42")); v != -42 || !isInt || !ok {
		t.Errorf("-42: %d %v %v", v, isInt, ok)
	}
	if _, isInt, _ := ParseInt([]byte("4.0")); isInt {
		t.Error("4.0 is not an integer")
	}
}

// FuzzParseInt: an integer ParseInt takes is a JSON number (the decoder
// then skips ValidNumber) and has strconv's value; what it refuses as out
// of range is a JSON integer strconv finds out of range too.
func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-0", "42", "-9223372036854775808", "9223372036854775808", "01", "+1", "-", "", "1e3",
		"12..5", "0x10", "1 ", "NaN", "-01", "00", "123456789012345678901234567890"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, isInt, ok := ParseInt([]byte(s))
		if !isInt || !ok {
			if isInt && jsonNumber(s) && !strings.ContainsAny(s, ".eE") {
				if _, err := strconv.ParseInt(s, 10, 64); err == nil {
					t.Fatalf("%q: refused, strconv takes it", s)
				}
			}
			return
		}
		if !jsonNumber(s) || !ValidNumber([]byte(s)) {
			t.Fatalf("%q: taken as %d, but not a JSON number", s, v)
		}
		if want, err := strconv.ParseInt(s, 10, 64); err != nil || want != v {
			t.Fatalf("%q: got %d, strconv %d (%v)", s, v, want, err)
		}
	})
}

// FuzzMicrosToNanos checks the parser against math/big on every input that
// strconv accepts as a float literal in JSON form.
func FuzzMicrosToNanos(f *testing.F) {
	for _, s := range []string{"1712345678901.123", "0.5", "-1e3", "123456789012345678901"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := MicrosToNanos([]byte(s))
		checkScaled(t, s, 3, got, ok)
	})
}

// checkScaled holds got, ok, what decimalScaled gave for s at scale, to
// the value math/big computes: s times 10^scale, truncated toward zero,
// refused when it overflows int64, and refused when s is not JSON.
func checkScaled(t *testing.T, s string, scale int, got int64, ok bool) {
	t.Helper()
	if !jsonNumber(s) {
		if ok {
			t.Fatalf("accepted non-JSON %q", s)
		}
		return
	}
	if strings.ContainsAny(s, "eE") && len(s) > 12 {
		return
	}
	r, okr := new(big.Rat).SetString(s)
	if !okr {
		return
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	q := new(big.Int).Quo(r.Num(), r.Denom()) // truncates toward zero
	if !q.IsInt64() {
		if ok {
			t.Fatalf("%q scale %d: accepted %d but true value %s overflows", s, scale, got, q)
		}
		return
	}
	if !ok || got != q.Int64() {
		// Extremely long mantissas are truncated to 19 digits by design.
		if len(s) > 19 {
			return
		}
		t.Fatalf("%q scale %d: got %d,%v want %d", s, scale, got, ok, q.Int64())
	}
}

func jsonNumber(s string) bool {
	if s == "" {
		return false
	}
	i := 0
	if s[0] == '-' {
		i++
	}
	if i >= len(s) {
		return false
	}
	if s[i] == '0' {
		i++
	} else if s[i] >= '1' && s[i] <= '9' {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
		if e, err := strconv.Atoi(s[j:i]); err != nil || e > 400 {
			return i == len(s) // valid JSON, but too big for big.Rat to be quick
		}
	}
	return i == len(s)
}

func TestValidNumber(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"0", "-0", "12", "12.5", "1e3", "1E+3", "-1.5e-3", "0.001"} {
		if !ValidNumber([]byte(s)) || !jsonNumber(s) {
			t.Errorf("%q should be valid", s)
		}
	}
	for _, s := range []string{"", "-", "12..5", "NaN", "Infinity", "01", "1.", ".5", "1e", "+1", "0x10"} {
		if ValidNumber([]byte(s)) {
			t.Errorf("%q should be invalid", s)
		}
	}
}

// FuzzDecimalScaledFastDigits: decimalScaled, whose first eighteen digits
// skip the mantissa's overflow check, gives what math/big gives at both
// scales ingest uses (the seeds cross the eighteen-digit line).
func FuzzDecimalScaledFastDigits(f *testing.F) {
	for _, s := range []string{"1751400000000000.300", "2000738.122", "-0.5", "123456789012345678", "1234567890123456789",
		"12345678901234567890123", "0.000000000000000000001", "123456789.1234567890123", "9223372036854775807",
		"18446744073709551615", "-9223372036854775808", "1e3", "01", "1.", "-", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, scale := range []int{0, 3} {
			v, ok := decimalScaled([]byte(s), scale)
			checkScaled(t, s, scale, v, ok)
		}
	})
}
