package main

import (
	"bytes"
	"database/sql"
	"math/big"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/tracehouse/tracehouse/report"
)

// TestSQLRowsToArrow writes one row of every kind of column (and a row of
// NULLs) as `sql --format arrow` does, and reads the stream back with
// arrow-go's IPC reader: the types DuckDB's own Arrow export would give,
// and the values (the driver's DECIMAL, INTERVAL and MAP values reach
// report.WriteArrow as report's).
func TestSQLRowsToArrow(t *testing.T) {
	t.Parallel()
	rows := sqlRowsOf(t, `SELECT * FROM (VALUES
		(true, 7::TINYINT, 300::SMALLINT, 70000::INTEGER, 9007199254740993::BIGINT, 200::UTINYINT,
		 18446744073709551615::UBIGINT, 1.5::FLOAT, 2.25::DOUBLE, 123456789012345678901234567890::HUGEINT,
		 12.34::DECIMAL(10,2), 'héllo', '\x01'::BLOB, DATE '2024-03-05', TIME '01:02:03.000004',
		 TIMESTAMP '2024-03-05 06:07:08.123456', INTERVAL 3 DAY, [1, NULL, 3], [1, 2]::INTEGER[2],
		 {'a': 1, 'b': 'x'}, MAP {'k': 10, 'l': 20}, '{"a":[1,2]}'::JSON,
		 '00112233-4455-6677-8899-aabbccddeeff'::UUID, [['x'], []]),
		(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
		 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
	) t(b, i8, i16, i32, i64, u8, u64, f32, f64, huge, dec, s, blob, d, tm, ts, iv, lst, arr, st, mp, js, id, nested)`)
	var buf bytes.Buffer
	if err := report.WriteArrow(&buf, rows); err != nil {
		t.Fatal(err)
	}
	r, err := ipc.NewReader(&buf, ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	wantTypes := []string{"bool", "int8", "int16", "int32", "int64", "uint8", "uint64", "float32", "float64",
		"decimal(38, 0)", "decimal(10, 2)", "utf8", "binary", "date32", "time64[us]", "timestamp[us]",
		"month_day_nano_interval", "list<item: int32, nullable>", "fixed_size_list<item: int32, nullable>[2]",
		"struct<a: int32, b: utf8>", "map<utf8, int32, items_nullable>", "utf8", "utf8",
		"list<item: list<item: utf8, nullable>, nullable>"}
	fields := r.Schema().Fields()
	if len(fields) != len(wantTypes) {
		t.Fatalf("%d fields, want %d", len(fields), len(wantTypes))
	}
	for i, f := range fields {
		if got := f.Type.String(); got != wantTypes[i] {
			t.Errorf("%s: type %s, want %s", f.Name, got, wantTypes[i])
		}
	}
	if !r.Next() {
		t.Fatalf("no record: %v", r.Err())
	}
	rec := r.RecordBatch()
	if rec.NumRows() != 2 {
		t.Fatalf("%d rows, want 2", rec.NumRows())
	}
	want := []string{"true", "7", "300", "70000", "9007199254740993", "200", "18446744073709551615", "1.5", "2.25",
		`"123456789012345678901234567890"`, `"12.34"`, `"héllo"`, `"AQ=="`, `"2024-03-05"`, `"01:02:03.000004"`,
		`"2024-03-05T06:07:08.123456Z"`, `{"months":0,"days":3,"nanoseconds":0}`, "[1,null,3]", "[1,2]",
		`{"a":1,"b":"x"}`, `[{"key":"k","value":10},{"key":"l","value":20}]`, `"{\"a\":[1,2]}"`,
		`"00112233-4455-6677-8899-aabbccddeeff"`, `[["x"],[]]`}
	for i, col := range rec.Columns() {
		got := arrowValueJSON(t, col, 0)
		if got != want[i] {
			t.Errorf("%s = %s, want %s", fields[i].Name, got, want[i])
		}
		if !col.IsNull(1) {
			t.Errorf("%s: row 2 is not NULL", fields[i].Name)
		}
	}
	if r.Next() {
		t.Error("a second record batch")
	}
}

// arrowValueJSON is row i of col as arrow-go renders it in JSON.
func arrowValueJSON(t *testing.T, col arrow.Array, i int) string {
	t.Helper()
	s := array.NewSlice(col, int64(i), int64(i+1))
	defer s.Release()
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	// one-element JSON array
	return strings.TrimSpace(string(b[1 : len(b)-1]))
}

// TestReportDecimalPrintsAsDriver: report.Decimal prints every value as
// the driver's Decimal does (a cell of `sql` is unchanged by the
// conversion), over signs, scales and trailing zeros.
func TestReportDecimalPrintsAsDriver(t *testing.T) {
	t.Parallel()
	huge, _ := new(big.Int).SetString("-12345678901234567890123456789012345000", 10)
	values := []*big.Int{huge}
	for _, v := range []int64{0, 1, -1, 5, -5, 10, 120, -1200, 1230, 123456789, -100000, 7000001} {
		values = append(values, big.NewInt(v))
	}
	for _, v := range values {
		for scale := uint8(0); scale <= 20; scale++ {
			want := duckdb.Decimal{Width: 38, Scale: scale, Value: v}.String()
			if got := (report.Decimal{Width: 38, Scale: scale, Value: v}).String(); got != want {
				t.Errorf("%s scale %d: %q, want %q", v, scale, got, want)
			}
		}
	}
}

// TestSQLRowsNested: driver values inside LISTs, STRUCTs and MAPs come
// out as report's too, a MAP's order kept.
func TestSQLRowsNested(t *testing.T) {
	t.Parallel()
	rows := sqlRowsOf(t, `SELECT [1.50::DECIMAL(4,2)] AS l, {'iv': INTERVAL 2 MONTH} AS s,
		MAP {'z': MAP {1: 2}, 'a': NULL} AS m`)
	if !rows.Next() {
		t.Fatalf("no row: %v", rows.Err())
	}
	v := rows.Values()
	if d, ok := v[0].([]any)[0].(report.Decimal); !ok || d.String() != "1.5" || d.Scale != 2 {
		t.Errorf("list element %#v, want Decimal 1.5", v[0])
	}
	if iv, ok := v[1].(map[string]any)["iv"].(report.Interval); !ok || iv != (report.Interval{Months: 2}) {
		t.Errorf("struct field %#v, want Interval of 2 months", v[1])
	}
	m, ok := v[2].(report.Map)
	if !ok || len(m.Keys) != 2 || m.Keys[0] != "z" || m.Keys[1] != "a" || m.Values[1] != nil {
		t.Fatalf("map %#v, want keys z, a", v[2])
	}
	if inner, ok := m.Values[0].(report.Map); !ok || len(inner.Keys) != 1 || inner.Keys[0] != int32(1) || inner.Values[0] != int32(2) {
		t.Errorf("inner map %#v, want {1: 2}", m.Values[0])
	}
	if rows.Next() || rows.Err() != nil {
		t.Errorf("a second row or an error: %v", rows.Err())
	}
}

// sqlRowsOf runs query on a fresh in-memory DuckDB and reads its result as
// the sql command does; everything is closed when t ends.
func sqlRowsOf(t *testing.T, query string) *sqlRows {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	raw, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	rows, err := newSQLRows(raw)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
