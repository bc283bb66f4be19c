package report

import (
	"bytes"
	"database/sql"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	_ "github.com/duckdb/duckdb-go/v2"
)

// TestWriteArrowTypes writes one row of every kind of column (and a row of
// NULLs) and reads the stream back with arrow-go's IPC reader: the types
// DuckDB's own Arrow export would give, and the values.
func TestWriteArrowTypes(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT * FROM (VALUES
		(true, 7::TINYINT, 300::SMALLINT, 70000::INTEGER, 9007199254740993::BIGINT, 200::UTINYINT,
		 18446744073709551615::UBIGINT, 1.5::FLOAT, 2.25::DOUBLE, 123456789012345678901234567890::HUGEINT,
		 12.34::DECIMAL(10,2), 'héllo', '\x01'::BLOB, DATE '2024-03-05', TIME '01:02:03.000004',
		 TIMESTAMP '2024-03-05 06:07:08.123456', INTERVAL 3 DAY, [1, NULL, 3], [1, 2]::INTEGER[2],
		 {'a': 1, 'b': 'x'}, MAP {'k': 10, 'l': 20}, '{"a":[1,2]}'::JSON,
		 '00112233-4455-6677-8899-aabbccddeeff'::UUID, [['x'], []]),
		(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
		 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
	) t(b, i8, i16, i32, i64, u8, u64, f32, f64, huge, dec, s, blob, d, tm, ts, iv, lst, arr, st, mp, js, id, nested)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var buf bytes.Buffer
	if err := WriteArrow(&buf, rows); err != nil {
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
		got := valueJSON(t, col, 0)
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

// valueJSON is row i of col as arrow-go renders it in JSON.
func valueJSON(t *testing.T, col arrow.Array, i int) string {
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

// TestWriteArrowBatches: more rows than one batch holds give several
// batches adding up to every row; no rows give a schema and no batch.
func TestWriteArrowBatches(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, n := range []int{0, arrowBatch*2 + 5} {
		rows, err := db.Query(`SELECT i::BIGINT AS i FROM range(?) t(i)`, n)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		err = WriteArrow(&buf, rows)
		rows.Close()
		if err != nil {
			t.Fatal(err)
		}
		r, err := ipc.NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		var total, batches int64
		var sum int64
		for r.Next() {
			rec := r.RecordBatch()
			batches++
			total += rec.NumRows()
			for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
				sum += v
			}
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		r.Release()
		wantBatches := int64(0)
		if n > 0 {
			wantBatches = 3
		}
		if total != int64(n) || batches != wantBatches || sum != int64(n)*int64(n-1)/2 {
			t.Errorf("n=%d: %d rows in %d batches, sum %d", n, total, batches, sum)
		}
	}
}

func TestParseSQLType(t *testing.T) {
	for s, want := range map[string]string{
		`STRUCT("a ""b" INTEGER[], "c" MAP(VARCHAR, STRUCT("d" DOUBLE)))`: `struct<a "b: list<item: int32, nullable>, c: map<utf8, struct<d: float64>, items_nullable>>`,
		`DECIMAL(18,3)[2][]`:              `list<item: fixed_size_list<item: decimal(18, 3), nullable>[2], nullable>`,
		`UNION("a" INTEGER, "b" VARCHAR)`: `utf8`,
	} {
		typ, err := parseSQLType(s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		if got := typ.arrow.String(); got != want {
			t.Errorf("%s: %s, want %s", s, got, want)
		}
	}
	for _, s := range []string{"STRUCT(", "MAP(INTEGER", "WHAT", "INTEGER[x]"} {
		if _, err := parseSQLType(s); err == nil {
			t.Errorf("%s: no error", s)
		}
	}
}
