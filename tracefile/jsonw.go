package tracefile

import (
	"bytes"

	"github.com/valyala/fastjson"

	"github.com/tracehouse/tracehouse/ingest/decode"
)

// Events that need no repair are copied byte for byte; the few that do are
// parsed with fastjson and written back with the writer below, which (unlike
// fastjson's own MarshalTo, which quotes the Go way, \x01) escapes strings
// the JSON way and keeps number text as written.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaping quotes, backslashes and
// control characters. Other bytes are copied as they are.
func appendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendValue appends v as compact JSON: strings re-escaped, numbers as
// written except those JSON has no form for (NaN, Infinity, 01), which
// become null.
func appendValue(dst []byte, v *fastjson.Value) []byte {
	switch v.Type() {
	case fastjson.TypeObject:
		o, _ := v.Object()
		dst = append(dst, '{')
		first := true
		o.Visit(func(k []byte, v *fastjson.Value) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendValue(dst, v)
		})
		return append(dst, '}')
	case fastjson.TypeArray:
		a, _ := v.Array()
		dst = append(dst, '[')
		for i, e := range a {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, e)
		}
		return append(dst, ']')
	case fastjson.TypeString:
		s, _ := v.StringBytes()
		return appendString(dst, s)
	case fastjson.TypeNumber:
		n := len(dst)
		dst = v.MarshalTo(dst)
		if !decode.ValidNumber(dst[n:]) {
			return append(dst[:n], "null"...)
		}
		return dst
	default:
		return v.MarshalTo(dst)
	}
}

// rawControl reports whether an event holds an unescaped control character
// inside a string: invalid JSON that fastjson reads but Perfetto refuses (the
// whole file fails to load).
func rawControl(b []byte) bool {
	for {
		q := bytes.IndexByte(b, '"')
		if q < 0 {
			return false
		}
		b = b[q+1:]
		i := 0
		for ; i < len(b); i++ {
			c := b[i]
			if c == '"' {
				break
			}
			if c == '\\' {
				i++
				continue
			}
			if c < 0x20 {
				return true
			}
		}
		if i >= len(b) {
			return false
		}
		b = b[i+1:]
	}
}

// badNumber reports whether v holds a number JSON has no form for (NaN,
// Infinity, a leading zero...), which fastjson accepts and Perfetto refuses.
func badNumber(v *fastjson.Value, num []byte) ([]byte, bool) {
	switch v.Type() {
	case fastjson.TypeNumber:
		num = v.MarshalTo(num[:0])
		return num, !decode.ValidNumber(num)
	case fastjson.TypeObject:
		o, _ := v.Object()
		bad := false
		o.Visit(func(_ []byte, v *fastjson.Value) {
			if !bad {
				num, bad = badNumber(v, num)
			}
		})
		return num, bad
	case fastjson.TypeArray:
		a, _ := v.Array()
		for _, e := range a {
			var bad bool
			if num, bad = badNumber(e, num); bad {
				return num, true
			}
		}
	}
	return num, false
}
