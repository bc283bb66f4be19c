package main

import (
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/report"
)

// SQLOptions are the parsed flags of `tracehouse sql`.
type SQLOptions struct {
	common
	Format report.Format
	Query  string
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
All times are integer nanoseconds (*_ns).`,
		Example: `  tracehouse sql "SELECT family, round(sum(dur_ns)/1e6, 2) AS ms FROM kernel_events GROUP BY 1 ORDER BY 2 DESC"
  tracehouse sql --format csv "SELECT * FROM kernel_events WHERE run = 'sglang-llama' LIMIT 100" > k.csv
  echo "SELECT count(*) FROM kernels" | tracehouse sql`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			opts.common = f.common(cmd)
			if opts.Format, err = f.outputFormat(); err != nil {
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

func sqlRun(opts *SQLOptions) error {
	w, err := opts.Warehouse(opts.Ctx, false)
	if err != nil {
		return err
	}
	defer w.Close()
	rows, err := w.DB.QueryContext(opts.Ctx, opts.Query)
	if err != nil {
		return fmt.Errorf("sql: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("sql: %w", err)
	}
	t := &report.Table{Name: "result", Empty: "(no rows)"}
	for _, c := range cols {
		t.Columns = append(t.Columns, report.Column{Name: c})
	}
	js := []map[string]any{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("sql: %w", err)
		}
		row := make([]string, len(cols))
		obj := make(map[string]any, len(cols))
		for i, v := range vals {
			row[i] = cell(v)
			obj[cols[i]] = jsonValue(v)
		}
		t.Rows = append(t.Rows, row)
		js = append(js, obj)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sql: %w", err)
	}
	if len(cols) == 0 {
		return nil
	}
	return report.Render(opts.IO.Out, opts.Format, report.Doc{Blocks: []any{t}, JSON: js})
}

// cell formats a value for a text cell.
func cell(v any) string {
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
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// jsonValue keeps numbers and booleans typed in JSON output.
func jsonValue(v any) any {
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
			out[i] = jsonValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonValue(e)
		}
		return out
	}
	return cell(v)
}
