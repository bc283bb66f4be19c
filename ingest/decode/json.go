package decode

import (
	"bytes"

	"github.com/valyala/fastjson"
)

// ParseJSON parses one JSON value with p as ingest and the rewriters read
// them: like fastjson, which takes NaN and Inf where JSON has no number, and
// also JavaScript's Infinity and -Infinity (which fastjson stops at after
// three letters). Such numbers come back as TypeNumber values whose text is
// not a JSON number (ValidNumber is false), for the caller to refuse or
// null as its rules say. The value refers to raw, or to a repaired copy.
func ParseJSON(p *fastjson.Parser, raw []byte) (*fastjson.Value, error) {
	v, err := p.ParseBytes(raw)
	if err == nil || !bytes.Contains(bytes.ToLower(raw), []byte("infinity")) {
		return v, err
	}
	fixed, ok := infinityAsInf(raw)
	if !ok {
		return v, err
	}
	return p.ParseBytes(fixed)
}

// infinityAsInf returns a copy of raw with every Infinity outside strings
// (in any case, as fastjson reads NaN and Inf) written as Inf padded with
// blanks to the same length (so byte offsets within the value do not move);
// ok is false when there is none.
func infinityAsInf(raw []byte) ([]byte, bool) {
	var out []byte
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == 'I' || c == 'i') && len(raw)-i >= len("Infinity") && bytes.EqualFold(raw[i:i+len("Infinity")], []byte("Infinity")):
			if out == nil {
				out = bytes.Clone(raw)
			}
			copy(out[i:], "Inf     ")
			i += len("Infinity") - 1
		}
	}
	return out, out != nil
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string, escaping quotes, backslashes
// and control characters. Other bytes are copied as they are.
func AppendJSONString(dst, s []byte) []byte {
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

// AppendJSON appends v as compact JSON (unlike fastjson's own MarshalTo,
// which quotes the Go way, \x01): strings escaped the JSON way, numbers as
// written except those JSON has no form for (NaN, Infinity, 01), which
// become null.
func AppendJSON(dst []byte, v *fastjson.Value) []byte {
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
			dst = AppendJSONString(dst, k)
			dst = append(dst, ':')
			dst = AppendJSON(dst, v)
		})
		return append(dst, '}')
	case fastjson.TypeArray:
		a, _ := v.Array()
		dst = append(dst, '[')
		for i, e := range a {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSON(dst, e)
		}
		return append(dst, ']')
	case fastjson.TypeString:
		s, _ := v.StringBytes()
		return AppendJSONString(dst, s)
	case fastjson.TypeNumber:
		n := len(dst)
		dst = v.MarshalTo(dst)
		if !ValidNumber(dst[n:]) {
			return append(dst[:n], "null"...)
		}
		return dst
	default:
		return v.MarshalTo(dst)
	}
}
