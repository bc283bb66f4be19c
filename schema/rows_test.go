package schema_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// countRows writes n rows (i, 10*i or NULL every third row) across chunks.
type countRows struct {
	n, next int
	fail    error // returned once next reaches n/2
}

func (c *countRows) Fill(chunk duckdb.DataChunk) (int, error) {
	k := 0
	for ; k < schema.ChunkRows() && c.next < c.n; k++ {
		if c.fail != nil && c.next == c.n/2 {
			return 0, c.fail
		}
		i := int64(c.next)
		err := duckdb.SetChunkValue(chunk, 0, k, i)
		if i%3 == 0 {
			err = errors.Join(err, chunk.SetValue(1, k, nil))
		} else {
			err = errors.Join(err, duckdb.SetChunkValue(chunk, 1, k, int32(10*i)))
		}
		if err != nil {
			return 0, err
		}
		c.next++
	}
	return k, nil
}

// TestInsertRows: typed rows land in the named columns (NULLs too, across
// several chunks), inside the connection's transaction (a rollback takes
// them back and the next call still works), and a source's error fails the
// statement naming the table.
func TestInsertRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, "")
	conn, err := w.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TEMP TABLE t (a BIGINT, b INTEGER, c VARCHAR DEFAULT 'x')`)
	cols := []schema.Column{{Name: "a", Type: duckdb.TYPE_BIGINT}, {Name: "b", Type: duckdb.TYPE_INTEGER}}
	sum := func() string {
		t.Helper()
		var s string
		if err := conn.QueryRowContext(ctx, `SELECT count(*) || ' ' || count(b) || ' ' || coalesce(sum(a), 0) || ' ' ||
			coalesce(sum(b), 0) || ' ' || count(*) FILTER (WHERE c = 'x') FROM t`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	n := 3*schema.ChunkRows() + 7
	exec(`BEGIN TRANSACTION`)
	if err := w.InsertRows(ctx, conn, "t", cols, &countRows{n: n}); err != nil {
		t.Fatal(err)
	}
	// n rows, a = 0..n-1, b = 10*a except every third row
	var nonNull, bsum int64
	for i := range int64(n) {
		if i%3 != 0 {
			nonNull++
			bsum += 10 * i
		}
	}
	want := strings.Join([]string{itoa(int64(n)), itoa(nonNull), itoa(int64(n) * int64(n-1) / 2), itoa(bsum), itoa(int64(n))}, " ")
	if got := sum(); got != want {
		t.Errorf("after insert: %s, want %s", got, want)
	}
	exec(`ROLLBACK`)
	if got := sum(); got != "0 0 0 0 0" {
		t.Errorf("after rollback: %s", got)
	}
	if err := w.InsertRows(ctx, conn, "t", cols, &countRows{n: 5}); err != nil {
		t.Fatal(err)
	}
	if got := sum(); got != "5 3 10 70 5" {
		t.Errorf("second insert: %s", got)
	}
	err = w.InsertRows(ctx, conn, "t", cols, &countRows{n: 100, fail: errors.New("source broke")})
	if err == nil || !strings.Contains(err.Error(), "insert into t") || !strings.Contains(err.Error(), "source broke") {
		t.Errorf("failing source: %v", err)
	}
	if got := sum(); got != "5 3 10 70 5" {
		t.Errorf("after the failed insert: %s", got)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// waitRows writes one chunk, then waits for ctx and fails with its error.
type waitRows struct {
	ctx     context.Context
	started chan struct{}
	calls   int
}

func (s *waitRows) Fill(chunk duckdb.DataChunk) (int, error) {
	s.calls++
	if s.calls == 1 {
		for k := range 10 {
			if err := duckdb.SetChunkValue(chunk, 0, k, int64(k)); err != nil {
				return 0, err
			}
		}
		return 10, nil
	}
	close(s.started)
	<-s.ctx.Done()
	return 0, s.ctx.Err()
}

// TestInsertRowsCancelled: with DuckDB's own threads calling the source,
// a source that stops on its caller's cancellation fails the insert with
// that error and leaves nothing behind.
func TestInsertRowsCancelled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	conn, err := w.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE TEMP TABLE t (a BIGINT)`); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	src := &waitRows{ctx: cctx, started: make(chan struct{})}
	go func() {
		<-src.started
		cancel()
	}()
	err = w.InsertRows(cctx, conn, "t", []schema.Column{{Name: "a", Type: duckdb.TYPE_BIGINT}}, src)
	if err == nil || !strings.Contains(err.Error(), "insert into t") {
		t.Fatalf("cancelled insert: %v", err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d rows left after the cancelled insert (%v)", n, err)
	}
}

// TestInsertRowsAfterARead: a transaction that read the warehouse before
// its first InsertRows sees the rows' table function when the warehouse
// registered it first (RegisterRows, as ingest does before its loaders
// begin): registered lazily, on a connection of its own, it came after
// the transaction's snapshot and "does not exist" there.
func TestInsertRowsAfterARead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, "")
	if err := w.RegisterRows(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := w.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"CREATE TABLE t (i BIGINT, v INTEGER)", "BEGIN TRANSACTION"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	cols := []schema.Column{{Name: "i", Type: duckdb.TYPE_BIGINT}, {Name: "v", Type: duckdb.TYPE_INTEGER}}
	if err := w.InsertRows(ctx, conn, "t", cols, &countRows{n: 5}); err != nil {
		t.Fatalf("insert after a read in the transaction: %v", err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 5 {
		t.Errorf("rows stored: %d %v, want 5", n, err)
	}
}
