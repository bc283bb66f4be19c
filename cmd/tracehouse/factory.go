package main

import (
	"context"

	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema"
)

// Factory holds what commands share; the warehouse opens lazily so that
// --help never touches the database.
type Factory struct {
	IO     *IOStreams
	Getenv func(string) string
	// Set by the root command's persistent flags.
	DB     string
	Format string
}

// DBPath is the warehouse path: --db, else TRACEHOUSE_DB, else ./tracehouse.duckdb.
func (f *Factory) DBPath() string {
	if f.DB != "" {
		return f.DB
	}
	if p := f.Getenv("TRACEHOUSE_DB"); p != "" {
		return p
	}
	return "tracehouse.duckdb"
}

// Open opens the warehouse, read-only when the command only reads.
func (f *Factory) Open(ctx context.Context, readOnly bool) (*schema.Warehouse, error) {
	return schema.Open(ctx, f.DBPath(), schema.Options{ReadOnly: readOnly})
}

// OutputFormat parses --format.
func (f *Factory) OutputFormat() (report.Format, error) {
	fm, err := report.ParseFormat(f.Format)
	if err != nil {
		return "", &usageError{err}
	}
	return fm, nil
}
