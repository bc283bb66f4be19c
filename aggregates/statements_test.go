package aggregates

import (
	"context"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/internal/sqlcheck"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// statements are the package's embedded statements, named by stmt and by
// the functions that hand their name to it.
var statements = sqlcheck.Statements{FS: sqlFiles, Text: stmt,
	NameArgs: map[string]int{"stmt": 0, "pendingRuns": 2, "someRuns": 2, "someRunsAtOnce": 2}}

// TestEveryStatementPrepares prepares every embedded statement against a
// migrated warehouse, so a renamed column or table fails here rather than
// halfway through someone's finish.
func TestEveryStatementPrepares(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, "")
	conn, err := w.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The overlap sweep's rows reach overlap_store_rows.sql as a virtual
	// table (a query appender): stand in an empty table of its columns.
	defs := make([]string, len(sweptColumns))
	for i, c := range sweptColumns {
		defs[i] = c + " BIGINT"
	}
	if _, err := conn.ExecContext(ctx, "CREATE TEMP TABLE _swept ("+strings.Join(defs, ", ")+")"); err != nil {
		t.Fatal(err)
	}
	statements.Prepare(t, ctx, conn)
}

// TestEveryStatementNameExists checks that every statement name the code
// can ask stmt for is embedded: the literal stmt("x") calls, and the names
// the stores build at run time (a store's record statement with "_runs"
// for a batch of runs, its batchable check likewise), which no compiler
// checks. It also finds embedded files nothing names.
func TestEveryStatementNameExists(t *testing.T) {
	t.Parallel()
	built := map[string]string{} // name -> where it is asked for
	for _, s := range []runStore{overlapStore(), stepStore()} {
		for _, n := range append(append(append([]string{}, s.stmts...), s.after...), s.recorded...) {
			built[n] = "runStore " + s.what
		}
		built[s.commit] = "runStore " + s.what
		built[s.commit+"_runs"] = "runStore " + s.what + " (a batch)"
		if s.batchable != "" {
			built[s.batchable] = "runStore " + s.what
			built[s.batchable+"_runs"] = "runStore " + s.what + " (a batch)"
		}
	}
	for _, s := range []rankStore{fusionStore(), overlapRowsStore(0)} {
		for _, n := range []string{s.forget, s.clear, s.rows, s.commit, s.commit + "_runs"} {
			built[n] = "rankStore " + s.what
		}
		if s.batchable != "" {
			built[s.batchable] = "rankStore " + s.what
			built[s.batchable+"_runs"] = "rankStore " + s.what + " (a batch)"
		}
	}
	statements.CheckNames(t, built)
}
