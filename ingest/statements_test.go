package ingest

import (
	"context"
	"testing"

	"github.com/tracehouse/tracehouse/internal/sqlcheck"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

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
	statements.Prepare(t, ctx, conn)
}

// TestEveryStatementNameExists checks that every statement name the code
// can ask stmt for is embedded (the literal stmt("x") calls), and finds
// embedded files nothing names.
func TestEveryStatementNameExists(t *testing.T) {
	t.Parallel()
	statements.CheckNames(t, nil)
}
