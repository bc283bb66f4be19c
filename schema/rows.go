package schema

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// RowSource produces the rows of Warehouse.InsertRows a data chunk at a
// time: Fill writes up to ChunkRows() rows into chunk with duckdb.SetChunkValue,
// typed (an Appender takes every value boxed in a driver.Value: measured
// on 600 k rows of ten columns, 190-250 ms against 100-150 ms this way),
// and returns how many; 0 ends the rows. DuckDB calls it on one of its
// threads, one call at a time; the Go runtime lets such calls in only once
// package initialization is over, so InsertRows must not run from an init
// function (it would wait for itself).
type RowSource interface {
	Fill(chunk duckdb.DataChunk) (int, error)
}

// ChunkRows is the most rows RowSource.Fill may write into one chunk.
func ChunkRows() int { return duckdb.GetDataChunkCapacity() }

// Column is a column a RowSource fills: its name in the table and its
// DuckDB type.
type Column struct {
	Name string
	Type duckdb.Type
}

// rowFunction is the table function InsertRows reads its sources through,
// as `_tracehouse_rows(token)`. It is registered once per warehouse
// (DuckDB keeps table functions per database, not per connection) and
// finds each call's source by its token.
const rowFunction = "_tracehouse_rows"

// rowSources is a warehouse's registry of the sources of InsertRows calls
// in progress.
type rowSources struct {
	register sync.Once
	err      error
	mu       sync.Mutex
	next     int64
	byToken  map[int64]rowCall
}

type rowCall struct {
	cols []duckdb.ColumnInfo
	src  RowSource
}

// InsertRows inserts src's rows into table's columns cols, in one INSERT
// statement on conn (inside whatever transaction conn has open).
func (w *Warehouse) InsertRows(ctx context.Context, conn *sql.Conn, table string, cols []Column, src RowSource) error {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	q := fmt.Sprintf("INSERT INTO %s (%s) SELECT * FROM %s", table, strings.Join(names, ", "), RowsTable)
	if err := w.ExecRows(ctx, conn, q, cols, src); err != nil {
		return fmt.Errorf("insert into %s: %w", table, err)
	}
	return nil
}

// RowsTable is the name ExecRows's query gives src's rows.
const RowsTable = "__rows__"

// ExecRows runs query on conn with src's rows as a table of columns cols
// named RowsTable (a table function call replaces every occurrence), as in
// "UPDATE t SET v = m.v FROM __rows__ m WHERE t.id = m.id", with args bound.
func (w *Warehouse) ExecRows(ctx context.Context, conn *sql.Conn, query string, cols []Column, src RowSource, args ...any) error {
	if err := w.rows.registerOn(ctx, w.DB); err != nil {
		return err
	}
	infos := make([]duckdb.ColumnInfo, len(cols))
	for i, c := range cols {
		t, err := duckdb.NewTypeInfo(c.Type)
		if err != nil {
			return fmt.Errorf("column %s: %w", c.Name, err)
		}
		infos[i] = duckdb.ColumnInfo{Name: c.Name, T: t}
	}
	token := w.rows.add(rowCall{cols: infos, src: src})
	defer w.rows.remove(token)
	q := strings.ReplaceAll(query, RowsTable, fmt.Sprintf("%s(%d)", rowFunction, token))
	if _, err := conn.ExecContext(ctx, q, args...); err != nil {
		return err
	}
	return nil
}

func (r *rowSources) add(c rowCall) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byToken == nil {
		r.byToken = map[int64]rowCall{}
	}
	r.next++
	r.byToken[r.next] = c
	return r.next
}

func (r *rowSources) remove(token int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byToken, token)
}

func (r *rowSources) lookup(token int64) (rowCall, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.byToken[token]
	return c, ok
}

// RegisterRows registers the table function InsertRows and ExecRows read
// their rows through, if it is not yet. Call it before beginning a
// transaction that may read the warehouse before its first InsertRows:
// DuckDB's transaction sees the catalog as it was at its first read, so a
// function registered lazily after that (on a connection of its own, as
// InsertRows does) does not exist for it.
func (w *Warehouse) RegisterRows(ctx context.Context) error {
	return w.rows.registerOn(ctx, w.DB)
}

// registerOn registers the warehouse's table function, once, on a
// connection of its own: registered inside a caller's transaction, it
// would go when that transaction rolled back.
func (r *rowSources) registerOn(ctx context.Context, db *sql.DB) error {
	r.register.Do(func() {
		bigint, err := duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
		if err != nil {
			r.err = err
			return
		}
		// not the caller's cancellation: a failed registration is for good
		conn, err := db.Conn(context.WithoutCancel(ctx))
		if err != nil {
			r.err = err
			return
		}
		defer conn.Close()
		r.err = duckdb.RegisterTableUDF(conn, rowFunction, duckdb.ChunkTableFunction{
			Config: duckdb.TableFunctionConfig{Arguments: []duckdb.TypeInfo{bigint}},
			BindArguments: func(_ map[string]any, args ...any) (duckdb.ChunkTableSource, error) {
				token, _ := args[0].(int64)
				c, ok := r.lookup(token)
				if !ok {
					return nil, fmt.Errorf("%s: no rows for token %d", rowFunction, token)
				}
				return &chunkSource{call: c}, nil
			},
		})
	})
	if r.err != nil {
		return fmt.Errorf("register %s: %w", rowFunction, r.err)
	}
	return nil
}

// chunkSource adapts a RowSource to duckdb.ChunkTableSource.
type chunkSource struct{ call rowCall }

func (s *chunkSource) ColumnInfos() []duckdb.ColumnInfo     { return s.call.cols }
func (s *chunkSource) Cardinality() *duckdb.CardinalityInfo { return nil }
func (s *chunkSource) Init()                                {}

func (s *chunkSource) FillChunk(chunk duckdb.DataChunk) error {
	n, err := s.call.src.Fill(chunk)
	if err != nil {
		return err
	}
	return chunk.SetSize(n)
}
