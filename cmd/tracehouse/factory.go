package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/target"
)

// Factory builds what commands share from the root's flags and the process
// environment (cli/cli's cmdutil.Factory, without its weight). Commands copy
// what they need into their options before they run.
type Factory struct {
	IO     *IOStreams
	Getenv func(string) string
	// Set by the root command's persistent flags.
	db     string
	format string
}

// dbPath is the warehouse path: --db, else TRACEHOUSE_DB, else ./tracehouse.duckdb.
func (f *Factory) dbPath() string {
	if f.db != "" {
		return f.db
	}
	if p := f.Getenv("TRACEHOUSE_DB"); p != "" {
		return p
	}
	return "tracehouse.duckdb"
}

// warehouse is the lazy opener options hold (as cli/cli's options hold
// HttpClient): nothing opens the database until a command runs, so --help
// and usage errors never touch it.
func (f *Factory) warehouse() target.Opener {
	return func(ctx context.Context, write bool) (*schema.Warehouse, error) {
		return openWarehouse(ctx, f.dbPath(), schema.Options{ReadOnly: !write})
	}
}

// openWarehouse opens the warehouse file for every command: schema.Open
// (the tests, which run commands in-process, wrap it).
var openWarehouse = schema.Open

// outputFormat parses --format.
func (f *Factory) outputFormat() (report.Format, error) {
	fm, err := report.ParseFormat(f.format)
	if err != nil {
		return "", &usageError{err}
	}
	return fm, nil
}

// common are the dependencies every command's options hold besides its
// flags.
type common struct {
	IO *IOStreams
	// Warehouse opens the warehouse, for writing or read-only.
	Warehouse target.Opener
	// Ctx is the command's context, cancelled by SIGINT and SIGTERM.
	Ctx context.Context
}

func (f *Factory) common(cmd *cobra.Command) common {
	return common{IO: f.IO, Warehouse: f.warehouse(), Ctx: cmd.Context()}
}
