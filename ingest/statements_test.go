package ingest

import (
	"context"
	"strings"
	"testing"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/tracehouse/tracehouse/internal/sqlcheck"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// sqlType names the column types the virtual tables use.
var sqlType = map[duckdb.Type]string{duckdb.TYPE_BIGINT: "BIGINT", duckdb.TYPE_BOOLEAN: "BOOLEAN", duckdb.TYPE_VARCHAR: "VARCHAR"}

// statements are the package's embedded statements, named by stmt and by
// exec, which hands its name to it.
var statements = sqlcheck.Statements{FS: sqlFiles, Text: stmt, NameArgs: map[string]int{"stmt": 0, "exec": 0}}

// TestEveryStatementPrepares prepares every embedded ingest statement
// against a migrated warehouse, on a connection holding ingest's staging
// tables (as load.go's connections do), so a renamed column or table fails
// here rather than halfway through someone's ingest.
func TestEveryStatementPrepares(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, "")
	conn, err := w.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := prepareConn(ctx, conn); err != nil {
		t.Fatal(err)
	}
	// A statement reads rows Go hands it as a virtual table (a table
	// function): stand in an empty table of its columns.
	stand := map[string][]schema.Column{
		schema.RowsTable: linkColumns,
	}
	for table, cols := range stand {
		var defs []string
		for _, c := range cols {
			defs = append(defs, c.Name+" "+sqlType[c.Type])
		}
		if _, err := conn.ExecContext(ctx, "CREATE TEMP TABLE "+table+" ("+strings.Join(defs, ", ")+")"); err != nil {
			t.Fatal(err)
		}
	}
	statements.Prepare(t, ctx, conn)
}

// TestEveryStatementNameExists checks that every statement name the code
// can ask stmt for is embedded (the literal stmt("x") calls), and finds
// embedded files nothing names.
func TestEveryStatementNameExists(t *testing.T) {
	t.Parallel()
	statements.CheckNames(t, nil)
}
