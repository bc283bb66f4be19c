package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Decimal, Interval and Map are the values of DuckDB's DECIMAL, INTERVAL
// and MAP columns as the renderers here take them (the sql command
// converts its driver's); the rest are plain Go values (LIST []any, STRUCT
// map[string]any, HUGEINT *big.Int, times time.Time, ...).

// Decimal is a DECIMAL(Width, Scale) value: Value / 10^Scale.
type Decimal struct {
	Width, Scale uint8
	Value        *big.Int
}

// String is the value in decimal notation without trailing zeros after
// the point ("12.3", "-0.05", "120"), as DuckDB's Go driver prints it.
func (d Decimal) String() string {
	digits := new(big.Int).Abs(d.Value).String()
	scale := int(d.Scale)
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	s := digits[:len(digits)-scale]
	if frac := strings.TrimRight(digits[len(digits)-scale:], "0"); frac != "" {
		s += "." + frac
	}
	if d.Value.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// Interval is an INTERVAL value (fields in the driver's order: a cell
// prints it as the driver's value printed).
type Interval struct {
	Days   int32
	Months int32
	Micros int64
}

// Map is a MAP value: keys and values in the map's order.
type Map struct {
	Keys   []any
	Values []any
}

// Object is a JSON object whose keys keep their order (a result row in
// SELECT order, a DuckDB MAP in key order, a STRUCT in field order).
type Object struct {
	Keys   []string
	Values []any
}

// MarshalJSON writes the keys in order, without HTML escaping.
func (o Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.Keys {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeJSON(&b, k); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		if err := writeJSON(&b, o.Values[i]); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

// SQLValue turns a value scanned from a DuckDB result into one that
// encodes as JSON the way a reader expects: numbers and booleans typed,
// LISTs as arrays, MAPs and STRUCTs as objects (MAP keys as text), times as
// RFC 3339, HUGEINTs as decimal strings.
func SQLValue(v any) any {
	switch x := v.(type) {
	case nil, bool, string, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, int, uint:
		return x
	case []byte:
		return string(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case *big.Int:
		return x.String()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = SQLValue(e)
		}
		return out
	case Map:
		o := Object{Keys: make([]string, len(x.Keys)), Values: make([]any, len(x.Values))}
		for i, k := range x.Keys {
			o.Keys[i] = SQLCell(k)
			o.Values[i] = SQLValue(x.Values[i])
		}
		return o
	case map[string]any:
		// A STRUCT: the driver gives a Go map, so its field order is lost;
		// sort keys for a stable output.
		o := Object{}
		for _, k := range sortedKeys(x) {
			o.Keys = append(o.Keys, k)
			o.Values = append(o.Values, SQLValue(x[k]))
		}
		return o
	}
	return SQLCell(v)
}

// SQLCell formats a scanned value for a text or CSV cell: scalars as
// DuckDB prints them, NULL as NULL, nested values as compact JSON.
func SQLCell(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return x
	case []byte:
		return string(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32)
	case time.Time:
		return x.Format("2006-01-02 15:04:05.999999")
	case *big.Int:
		return x.String()
	case []any, Map, map[string]any:
		var b bytes.Buffer
		if err := writeJSON(&b, SQLValue(x)); err != nil {
			return fmt.Sprint(v)
		}
		return b.String()
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
