package decode

import "math"

// MicrosToNanos converts the decimal text of a JSON number of microseconds to
// integer nanoseconds without going through float64, which would lose
// precision on epoch timestamps such as 1712345678901.123. Digits beyond
// nanoseconds are truncated toward zero. ok is false for text that is not a
// JSON number or overflows int64.
func MicrosToNanos(b []byte) (ns int64, ok bool) {
	return decimalScaled(b, 3)
}

// decimalScaled parses a JSON number and returns it times 10^scale, truncated
// toward zero.
func decimalScaled(b []byte, scale int) (int64, bool) {
	i := 0
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	const limit = (math.MaxUint64 - 9) / 10
	var mant uint64
	exp := scale
	start := i
	// Eighteen digits cannot reach limit: those loops skip its check (the
	// times and ids of a trace are 10-17 digits; parsing them was 2% of an
	// ingest's instructions), and the checked loops go on from there.
	for fast := min(len(b), i+18); i < fast; i++ {
		c := b[i] - '0'
		if c > 9 {
			break
		}
		mant = mant*10 + uint64(c)
	}
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		if mant <= limit {
			mant = mant*10 + uint64(b[i]-'0')
		} else {
			exp++ // a digit too many for the mantissa: keep its magnitude
		}
		i++
	}
	digits := i - start
	if digits == 0 || (b[start] == '0' && digits > 1) {
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		fstart := i
		for fast := min(len(b), i+18-digits); i < fast; i++ {
			c := b[i] - '0'
			if c > 9 {
				break
			}
			mant = mant*10 + uint64(c)
			exp--
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if mant <= limit {
				mant = mant*10 + uint64(b[i]-'0')
				exp--
			}
			i++
		}
		if i == fstart {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		e, estart := 0, i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if e < 10000 {
				e = e*10 + int(b[i]-'0')
			}
			i++
		}
		if i == estart {
			return 0, false
		}
		if eneg {
			exp -= e
		} else {
			exp += e
		}
	}
	if i != len(b) {
		return 0, false
	}
	for ; exp > 0 && mant != 0; exp-- {
		if mant > math.MaxUint64/10 {
			return 0, false
		}
		mant *= 10
	}
	for ; exp < 0 && mant != 0; exp++ {
		mant /= 10
	}
	if neg {
		if mant > 1<<63 {
			return 0, false
		}
		return -int64(mant), true
	}
	if mant > math.MaxInt64 {
		return 0, false
	}
	return int64(mant), true
}

// ParseInt parses the text of a JSON integer that must fit int64.
// isInt is false when the text has a fraction or exponent.
func ParseInt(b []byte) (v int64, isInt, ok bool) {
	for _, c := range b {
		if c == '.' || c == 'e' || c == 'E' {
			return 0, false, false
		}
	}
	v, ok = decimalScaled(b, 0)
	return v, true, ok
}

// ValidNumber reports whether b is a number by JSON's grammar. The event
// parser is lenient about numbers (it takes 12..5 or NaN), so values that
// fail to convert are checked here to say which problem they have.
func ValidNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - j
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}
