package synth

import (
	"strconv"
	"unicode/utf8"
)

// appendStr appends s as a JSON string.
func appendStr(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			continue
		}
		if c >= utf8.RuneSelf {
			continue // valid UTF-8 passes through; names here are ASCII
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendMicros writes ns as microseconds with exactly three decimals, the
// way Kineto prints nanosecond-resolution times ("1234.567").
func appendMicros(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	r := ns % 1000
	return append(b, '.', byte('0'+r/100), byte('0'+r/10%10), byte('0'+r%10))
}

func appendDims(b []byte, d [3]int32) []byte {
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(d[0]), 10)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, int64(d[1]), 10)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, int64(d[2]), 10)
	return append(b, ']')
}

// prepareKSpec renders the parts of a GPU event that never change.
func prepareKSpec(k *kspec, sms int) {
	if k.nameJSON != nil {
		return
	}
	k.nameJSON = appendStr(nil, k.name)
	if k.cat != catKernel {
		return
	}
	var t []byte
	t = append(t, ",\n      \"registers per thread\": "...)
	t = strconv.AppendInt(t, int64(k.regs), 10)
	t = append(t, ",\n      \"shared memory\": "...)
	t = strconv.AppendInt(t, int64(k.smem), 10)
	blocks := float64(int64(k.grid[0])*int64(k.grid[1])*int64(k.grid[2])) / float64(sms)
	warps := blocks * float64((int64(k.block[0])*int64(k.block[1])*int64(k.block[2])+31)/32)
	t = append(t, ",\n      \"blocks per SM\": "...)
	t = strconv.AppendFloat(t, blocks, 'f', 6, 64)
	t = append(t, ",\n      \"warps per SM\": "...)
	t = strconv.AppendFloat(t, warps, 'f', 6, 64)
	t = append(t, ",\n      \"grid\": "...)
	t = appendDims(t, k.grid)
	t = append(t, ",\n      \"block\": "...)
	t = appendDims(t, k.block)
	t = append(t, ",\n      \"est. achieved occupancy %\": "...)
	t = strconv.AppendInt(t, int64(k.occ), 10)
	k.argsTail = t
}
