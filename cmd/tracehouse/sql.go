package main

import (
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/lake"
	"github.com/tracehouse/tracehouse/report"
)

// SQLOptions are the parsed flags of `tracehouse sql`.
type SQLOptions struct {
	common
	Format report.Format
	// Arrow writes the result as an Arrow IPC stream (--format arrow).
	Arrow bool
	Query string
}

func newCmdSQL(f *Factory, runF func(*SQLOptions) error) *cobra.Command {
	opts := &SQLOptions{}
	return &cobra.Command{
		Use:   "sql [QUERY]",
		Short: "Run SQL over the warehouse",
		Long: `Run one SQL query (or several; the last one's rows are printed) over the
warehouse, read-only. With no QUERY, the SQL is read from standard input.

Tables: runs, traces, kernels, kernel_names, launches, cpu_ops, py_frame_events,
sites, annotations. Views: kernel_events (kernels with names, families, run,
trace, site and CPU op), py_frames (Python frames with their names).
All times are integer nanoseconds (*_ns).

--format arrow writes the result as an Arrow IPC stream on standard output,
for pyarrow.ipc.open_stream, polars.read_ipc_stream or pandas. --lake DIR
runs the SQL over a Parquet lake instead of the warehouse.`,
		Example: `  tracehouse sql "SELECT family, round(sum(dur_ns)/1e6, 2) AS ms
    FROM kernel_events GROUP BY 1 ORDER BY 2 DESC"
  tracehouse sql --format csv \
    "SELECT * FROM kernel_events WHERE run = 'sglang-llama' LIMIT 100" > k.csv
  echo "SELECT count(*) FROM kernels" | tracehouse sql
  tracehouse sql --format arrow "SELECT * FROM kernel_events" > kernels.arrows
  tracehouse sql --lake /shared/lake \
    "SELECT run, count(*) FROM kernel_events GROUP BY 1"`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			opts.common = f.common(cmd)
			if strings.EqualFold(f.format, "arrow") {
				opts.Arrow = true
				if f.IO.OutTTY {
					return usagef("--format arrow writes binary: redirect standard output to a file or a pipe")
				}
			} else if opts.Format, err = f.outputFormat(); err != nil {
				return err
			}
			if len(args) == 1 {
				opts.Query = args[0]
			} else if f.IO.InTTY {
				return usagef("no SQL given: pass a query or pipe one on stdin")
			} else {
				b, err := io.ReadAll(f.IO.In)
				if err != nil {
					return fmt.Errorf("read SQL from stdin: %w", err)
				}
				opts.Query = string(b)
			}
			if strings.TrimSpace(opts.Query) == "" {
				return usagef("no SQL given: pass a query or pipe one on stdin")
			}
			if runF != nil {
				return runF(opts)
			}
			return sqlRun(opts)
		},
	}
}

// sqlError keeps DuckDB's own layout (the query line and the caret under
// the error's position), which one flattened line would lose.
type sqlError struct{ err error }

func (e *sqlError) Error() string { return "sql: " + e.err.Error() }
func (e *sqlError) Unwrap() error { return e.err }

// readsDescriptions says whether query may read the descriptions of the
// tables (as `schema` does): only the catalog's functions and views show
// them (duckdb_columns(), information_schema, pg_catalog's, ...), so a
// query naming none of them has no use for a lake's (lake.Describe: about
// 250 COMMENT statements, a quarter of such a command on the demo lake).
func readsDescriptions(query string) bool {
	q := strings.ToLower(query)
	for _, w := range []string{"comment", "duckdb_", "information_schema", "pg_", "pragma"} {
		if strings.Contains(q, w) {
			return true
		}
	}
	return false
}

func sqlRun(opts *SQLOptions) error {
	w, err := opts.Warehouse(opts.Ctx, false)
	if err != nil {
		return err
	}
	defer w.Close()
	if readsDescriptions(opts.Query) {
		if err := lake.Describe(opts.Ctx, w); err != nil {
			return err
		}
	}
	raw, err := w.DB.QueryContext(opts.Ctx, opts.Query)
	if err != nil {
		return &sqlError{err}
	}
	defer raw.Close()
	rows, err := newSQLRows(raw)
	if err != nil {
		return &sqlError{err}
	}
	if opts.Arrow {
		if err := report.WriteArrow(opts.IO.Out, rows); err != nil {
			return &sqlError{err}
		}
		return nil
	}
	var cols []string
	t := &report.Table{Name: "result", Empty: "(no rows)"}
	for _, c := range rows.Columns() {
		cols = append(cols, c.Name)
		t.Columns = append(t.Columns, report.Column{Name: c.Name})
	}
	js := []report.Object{}
	// numeric[i]: every value of column i so far is a number (or NULL);
	// such columns align right and are never shortened to fit.
	numeric := make([]bool, len(cols))
	for i := range numeric {
		numeric[i] = true
	}
	for rows.Next() {
		vals := rows.Values()
		row := make([]string, len(cols))
		obj := report.Object{Keys: cols, Values: make([]any, len(cols))}
		for i, v := range vals {
			switch v.(type) {
			case nil, int8, int16, int32, int64, uint8, uint16, uint32, uint64, int, uint, float32, float64, *big.Int:
			default:
				numeric[i] = false
			}
			row[i] = report.SQLCell(v)
			obj.Values[i] = report.SQLValue(v)
		}
		t.Rows = append(t.Rows, row)
		js = append(js, obj)
	}
	if err := rows.Err(); err != nil {
		return &sqlError{err}
	}
	if len(cols) == 0 {
		return nil
	}
	for i := range t.Columns {
		t.Columns[i].Right = numeric[i] && len(t.Rows) > 0
	}
	return opts.render(opts.Format, report.Doc{Blocks: []any{t}, JSON: js})
}
