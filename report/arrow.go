package report

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// arrowBatch is the number of rows per record batch of WriteArrow.
const arrowBatch = 65536

// Result is a query's result as WriteArrow reads it: values as SQLValue
// takes them (Decimal, Interval, Map and plain Go values).
type Result interface {
	Columns() []ResultColumn
	Next() bool
	Values() []any // the current row
	Err() error
}

// ResultColumn is a result column: its name and DuckDB type as DuckDB
// spells it ("DECIMAL(10,2)", "STRUCT(a INTEGER)", ...).
type ResultColumn struct {
	Name string
	Type string
}

// WriteArrow writes the rows of a query as an Arrow IPC stream
// (pyarrow.ipc.open_stream, polars.read_ipc_stream): one schema, then
// record batches of up to 65536 rows. Column types follow DuckDB's own
// Arrow export: integers, floats, booleans, strings, dates, times and
// timestamps as themselves (TIMESTAMP as microseconds without a time
// zone), DECIMAL(p,s) as decimal128(p,s), HUGEINT as decimal128(38,0),
// LIST/ARRAY/STRUCT/MAP as list/fixed_size_list/struct/map; JSON, UUID,
// ENUM, BIT and UNION values as strings.
func WriteArrow(w io.Writer, rows Result) error {
	cols := rows.Columns()
	fields := make([]arrow.Field, len(cols))
	types := make([]*sqlType, len(cols))
	for i, c := range cols {
		t, err := parseSQLType(c.Type)
		if err != nil {
			return fmt.Errorf("column %s: %w", c.Name, err)
		}
		types[i] = t
		fields[i] = arrow.Field{Name: c.Name, Type: t.arrow, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	iw := ipc.NewWriter(w, ipc.WithSchema(schema))
	flush := func() error {
		rec := b.NewRecordBatch()
		defer rec.Release()
		return iw.Write(rec)
	}
	n := 0
	for rows.Next() {
		for i, v := range rows.Values() {
			if err := appendArrow(b.Field(i), types[i], v); err != nil {
				return fmt.Errorf("column %s: %w", cols[i].Name, err)
			}
		}
		if n++; n == arrowBatch {
			if err := flush(); err != nil {
				return err
			}
			n = 0
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n > 0 {
		if err := flush(); err != nil {
			return err
		}
	}
	return iw.Close()
}

// sqlType is a DuckDB column type and the Arrow type it is written as.
type sqlType struct {
	name   string // DuckDB's base name: INTEGER, STRUCT, LIST, ...
	arrow  arrow.DataType
	elem   *sqlType   // LIST, ARRAY
	fields []*sqlType // STRUCT
	names  []string   // STRUCT
	key    *sqlType   // MAP
	value  *sqlType   // MAP
	scale  int32      // DECIMAL
}

var scalarArrow = map[string]arrow.DataType{
	"BOOLEAN":      arrow.FixedWidthTypes.Boolean,
	"TINYINT":      arrow.PrimitiveTypes.Int8,
	"SMALLINT":     arrow.PrimitiveTypes.Int16,
	"INTEGER":      arrow.PrimitiveTypes.Int32,
	"BIGINT":       arrow.PrimitiveTypes.Int64,
	"UTINYINT":     arrow.PrimitiveTypes.Uint8,
	"USMALLINT":    arrow.PrimitiveTypes.Uint16,
	"UINTEGER":     arrow.PrimitiveTypes.Uint32,
	"UBIGINT":      arrow.PrimitiveTypes.Uint64,
	"FLOAT":        arrow.PrimitiveTypes.Float32,
	"DOUBLE":       arrow.PrimitiveTypes.Float64,
	"HUGEINT":      &arrow.Decimal128Type{Precision: 38, Scale: 0},
	"UHUGEINT":     &arrow.Decimal128Type{Precision: 38, Scale: 0},
	"VARCHAR":      arrow.BinaryTypes.String,
	"JSON":         arrow.BinaryTypes.String,
	"ENUM":         arrow.BinaryTypes.String,
	"UUID":         arrow.BinaryTypes.String,
	"BIT":          arrow.BinaryTypes.String,
	"BIGNUM":       arrow.BinaryTypes.String,
	"TIMETZ":       arrow.BinaryTypes.String,
	"BLOB":         arrow.BinaryTypes.Binary,
	"GEOMETRY":     arrow.BinaryTypes.Binary,
	"DATE":         arrow.FixedWidthTypes.Date32,
	"TIME":         arrow.FixedWidthTypes.Time64us,
	"TIMESTAMP":    &arrow.TimestampType{Unit: arrow.Microsecond},
	"TIMESTAMP_S":  &arrow.TimestampType{Unit: arrow.Second},
	"TIMESTAMP_MS": &arrow.TimestampType{Unit: arrow.Millisecond},
	"TIMESTAMP_NS": &arrow.TimestampType{Unit: arrow.Nanosecond},
	"TIMESTAMPTZ":  &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
	"INTERVAL":     arrow.FixedWidthTypes.MonthDayNanoInterval,
	"SQLNULL":      arrow.Null,
}

// parseSQLType reads the type names duckdb-go reports: INTEGER,
// DECIMAL(18,3), VARCHAR[], INTEGER[3], STRUCT("a" INTEGER, "b" VARCHAR),
// MAP(VARCHAR, BIGINT), UNION(...).
func parseSQLType(s string) (*sqlType, error) {
	t, rest, err := parseTypePrefix(strings.TrimSpace(s))
	if err != nil {
		return nil, err
	}
	if rest != "" {
		return nil, fmt.Errorf("type %q: unexpected %q", s, rest)
	}
	return t, nil
}

func parseTypePrefix(s string) (*sqlType, string, error) {
	var t *sqlType
	switch {
	case strings.HasPrefix(s, "STRUCT("):
		t = &sqlType{name: "STRUCT"}
		rest := s[len("STRUCT("):]
		var fs []arrow.Field
		for !strings.HasPrefix(rest, ")") {
			name, r, err := parseQuoted(rest)
			if err != nil {
				return nil, "", err
			}
			f, r, err := parseTypePrefix(strings.TrimPrefix(r, " "))
			if err != nil {
				return nil, "", err
			}
			t.names = append(t.names, name)
			t.fields = append(t.fields, f)
			fs = append(fs, arrow.Field{Name: name, Type: f.arrow, Nullable: true})
			rest = strings.TrimPrefix(r, ", ")
		}
		s = rest[1:]
		t.arrow = arrow.StructOf(fs...)
	case strings.HasPrefix(s, "MAP("):
		k, r, err := parseTypePrefix(s[len("MAP("):])
		if err != nil {
			return nil, "", err
		}
		v, r, err := parseTypePrefix(strings.TrimPrefix(r, ", "))
		if err != nil {
			return nil, "", err
		}
		if !strings.HasPrefix(r, ")") {
			return nil, "", fmt.Errorf("type %q: want )", s)
		}
		s = r[1:]
		t = &sqlType{name: "MAP", key: k, value: v, arrow: arrow.MapOf(k.arrow, v.arrow)}
	case strings.HasPrefix(s, "UNION("), strings.HasPrefix(s, "DECIMAL("):
		depth, end := 0, -1
		for i, c := range s {
			if c == '(' {
				depth++
			} else if c == ')' {
				if depth--; depth == 0 {
					end = i
					break
				}
			}
		}
		if end < 0 {
			return nil, "", fmt.Errorf("type %q: unbalanced parentheses", s)
		}
		if strings.HasPrefix(s, "UNION(") {
			t = &sqlType{name: "UNION", arrow: arrow.BinaryTypes.String}
		} else {
			p, sc, ok := strings.Cut(s[len("DECIMAL("):end], ",")
			prec, err1 := strconv.Atoi(strings.TrimSpace(p))
			scale, err2 := strconv.Atoi(strings.TrimSpace(sc))
			if !ok || err1 != nil || err2 != nil {
				return nil, "", fmt.Errorf("type %q: bad DECIMAL", s)
			}
			t = &sqlType{name: "DECIMAL", scale: int32(scale), arrow: &arrow.Decimal128Type{Precision: int32(prec), Scale: int32(scale)}}
		}
		s = s[end+1:]
	default:
		i := strings.IndexFunc(s, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') })
		if i < 0 {
			i = len(s)
		}
		name := s[:i]
		a, ok := scalarArrow[name]
		if !ok {
			return nil, "", fmt.Errorf("type %q is not supported by --format arrow (cast it in SQL)", name)
		}
		t, s = &sqlType{name: name, arrow: a}, s[i:]
	}
	for strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return nil, "", fmt.Errorf("type %q: want ]", s)
		}
		if end == 1 {
			t = &sqlType{name: "LIST", elem: t, arrow: arrow.ListOf(t.arrow)}
		} else {
			n, err := strconv.Atoi(s[1:end])
			if err != nil {
				return nil, "", fmt.Errorf("type %q: bad array size", s)
			}
			t = &sqlType{name: "ARRAY", elem: t, arrow: arrow.FixedSizeListOf(int32(n), t.arrow)}
		}
		s = s[end+1:]
	}
	return t, s, nil
}

// parseQuoted reads a "quoted" struct field name ("" escapes a quote).
func parseQuoted(s string) (string, string, error) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", fmt.Errorf("type: want a quoted field name at %q", s)
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '"' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '"' {
			b.WriteByte('"')
			i++
			continue
		}
		return b.String(), s[i+1:], nil
	}
	return "", "", fmt.Errorf("type: unterminated field name in %q", s)
}

// appendArrow appends one scanned value.
func appendArrow(b array.Builder, t *sqlType, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	bad := func() error { return fmt.Errorf("%s value of Go type %T", t.name, v) }
	switch b := b.(type) {
	case *array.BooleanBuilder:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Int8Builder:
		x, ok := v.(int8)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Int16Builder:
		x, ok := v.(int16)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Int32Builder:
		x, ok := v.(int32)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Int64Builder:
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Uint8Builder:
		x, ok := v.(uint8)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Uint16Builder:
		x, ok := v.(uint16)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Uint32Builder:
		x, ok := v.(uint32)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Uint64Builder:
		x, ok := v.(uint64)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Float32Builder:
		x, ok := v.(float32)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Float64Builder:
		x, ok := v.(float64)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.StringBuilder:
		s, err := arrowString(t, v)
		if err != nil {
			return err
		}
		b.Append(s)
	case *array.BinaryBuilder:
		x, ok := v.([]byte)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Decimal128Builder:
		var n *big.Int
		switch x := v.(type) {
		case *big.Int:
			n = x
		case Decimal:
			n = x.Value
		default:
			return bad()
		}
		if n.BitLen() > 126 {
			return fmt.Errorf("%s value %s does not fit decimal128", t.name, n)
		}
		b.Append(decimal128.FromBigInt(n))
	case *array.Date32Builder:
		x, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		b.Append(arrow.Date32FromTime(x))
	case *array.Time64Builder:
		x, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		y, m, d := x.Date()
		b.Append(arrow.Time64(x.Sub(time.Date(y, m, d, 0, 0, 0, 0, x.Location())).Microseconds()))
	case *array.TimestampBuilder:
		x, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		ts, err := arrow.TimestampFromTime(x, t.arrow.(*arrow.TimestampType).Unit)
		if err != nil {
			return err
		}
		b.Append(ts)
	case *array.MonthDayNanoIntervalBuilder:
		x, ok := v.(Interval)
		if !ok {
			return bad()
		}
		b.Append(arrow.MonthDayNanoInterval{Months: x.Months, Days: x.Days, Nanoseconds: x.Micros * 1000})
	case *array.ListBuilder:
		xs, ok := v.([]any)
		if !ok {
			return bad()
		}
		b.Append(true)
		for _, e := range xs {
			if err := appendArrow(b.ValueBuilder(), t.elem, e); err != nil {
				return err
			}
		}
	case *array.FixedSizeListBuilder:
		xs, ok := v.([]any)
		if !ok {
			return bad()
		}
		b.Append(true)
		for _, e := range xs {
			if err := appendArrow(b.ValueBuilder(), t.elem, e); err != nil {
				return err
			}
		}
	case *array.StructBuilder:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		b.Append(true)
		for i, name := range t.names {
			if err := appendArrow(b.FieldBuilder(i), t.fields[i], m[name]); err != nil {
				return err
			}
		}
	case *array.MapBuilder:
		m, ok := v.(Map)
		if !ok {
			return bad()
		}
		b.Append(true)
		keys, vals := m.Keys, m.Values
		for i := range keys {
			if err := appendArrow(b.KeyBuilder(), t.key, keys[i]); err != nil {
				return err
			}
			if err := appendArrow(b.ItemBuilder(), t.value, vals[i]); err != nil {
				return err
			}
		}
	case *array.NullBuilder:
		b.AppendNull()
	default:
		return fmt.Errorf("no Arrow builder for %s", t.name)
	}
	return nil
}

// arrowString is a value of a column written as strings.
func arrowString(t *sqlType, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		if t.name == "UUID" && len(x) == 16 {
			h := hex.EncodeToString(x)
			return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
		}
		return string(x), nil
	case fmt.Stringer:
		return x.String(), nil
	}
	if t.name == "JSON" {
		b, err := json.Marshal(v)
		return string(b), err
	}
	return SQLCell(v), nil
}
