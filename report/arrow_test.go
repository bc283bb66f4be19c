package report

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// TestWriteArrowBatches: more rows than one batch holds give several
// batches adding up to every row; no rows give a schema and no batch.
func TestWriteArrowBatches(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, arrowBatch*2 + 5} {
		var buf bytes.Buffer
		if err := WriteArrow(&buf, &rangeResult{n: n}); err != nil {
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

// rangeResult is SELECT i::BIGINT AS i FROM range(n).
type rangeResult struct {
	n, i int
	row  []any
}

func (r *rangeResult) Columns() []ResultColumn { return []ResultColumn{{Name: "i", Type: "BIGINT"}} }
func (r *rangeResult) Values() []any           { return r.row }
func (r *rangeResult) Err() error              { return nil }

func (r *rangeResult) Next() bool {
	if r.i == r.n {
		return false
	}
	r.row = []any{int64(r.i)}
	r.i++
	return true
}
