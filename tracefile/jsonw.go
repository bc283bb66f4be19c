package tracefile

import (
	"bytes"

	"github.com/valyala/fastjson"

	"github.com/tracehouse/tracehouse/ingest/decode"
)

// Events that need no repair are copied byte for byte; the few that do are
// parsed with decode.ParseJSON and written back with decode.AppendJSON.

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
