package main

import (
	"database/sql"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/tracehouse/tracehouse/report"
)

// sqlRows reads a query's result for report: each row scanned, with the
// driver's own value types turned into report's. It joins the DuckDB
// driver to the renderers, which do not link the driver.
type sqlRows struct {
	rows *sql.Rows
	cols []report.ResultColumn
	vals []any
	ptrs []any
	err  error
}

func newSQLRows(rows *sql.Rows) (*sqlRows, error) {
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	r := &sqlRows{rows: rows, vals: make([]any, len(cts)), ptrs: make([]any, len(cts))}
	for i, ct := range cts {
		r.cols = append(r.cols, report.ResultColumn{Name: ct.Name(), Type: ct.DatabaseTypeName()})
		r.ptrs[i] = &r.vals[i]
	}
	return r, nil
}

func (r *sqlRows) Columns() []report.ResultColumn { return r.cols }

// Values is the current row; the next Next reuses the slice.
func (r *sqlRows) Values() []any { return r.vals }

func (r *sqlRows) Next() bool {
	if r.err != nil || !r.rows.Next() {
		return false
	}
	clear(r.vals)
	if r.err = r.rows.Scan(r.ptrs...); r.err != nil {
		return false
	}
	for i, v := range r.vals {
		r.vals[i] = reportValue(v)
	}
	return true
}

func (r *sqlRows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.rows.Err()
}

// reportValue turns the driver's types in v, at any depth (LIST elements,
// STRUCT fields, MAP keys and values), into report's.
func reportValue(v any) any {
	switch x := v.(type) {
	case duckdb.Decimal:
		return report.Decimal{Width: x.Width, Scale: x.Scale, Value: x.Value}
	case duckdb.Interval:
		return report.Interval{Days: x.Days, Months: x.Months, Micros: x.Micros}
	case duckdb.OrderedMap:
		keys, vals := x.Keys(), x.Values()
		for i := range keys {
			keys[i] = reportValue(keys[i])
		}
		for i := range vals {
			vals[i] = reportValue(vals[i])
		}
		return report.Map{Keys: keys, Values: vals}
	case []any:
		for i, e := range x {
			x[i] = reportValue(e)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = reportValue(e)
		}
	}
	return v
}
