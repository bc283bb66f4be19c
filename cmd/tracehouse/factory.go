package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/lake"
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
	lake   string
	format string
	wide   bool
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
// and usage errors never touch it. With --lake it opens the lake instead:
// an in-memory database whose tables are views over the lake's Parquet
// files, with every macro, so read commands work unchanged; it is
// read-only whatever write asks (only 'ingest --lake' and 'export --lake'
// write a lake, through package lake).
func (f *Factory) warehouse() target.Opener {
	return f.warehouseFor(nil)
}

// warehouseFor is warehouse for a command that reads the runs labelled
// runs only (nil: any): a lake then names only their event files
// (lake.OpenRuns), read into memory when small (lake.ReadOptions.Load); a
// warehouse file is opened as by warehouse.
func (f *Factory) warehouseFor(runs []string) target.Opener {
	return f.warehouseOf(runs, false)
}

// warehouseOf is warehouseFor for a command that creates the warehouse
// file when it does not exist (creates, when it writes: it ingests), or
// refuses a missing one.
func (f *Factory) warehouseOf(runs []string, creates bool) target.Opener {
	if f.lake != "" {
		dir := f.lake
		return func(ctx context.Context, write bool) (*schema.Warehouse, error) {
			engine, err := f.engine()
			if err != nil {
				return nil, err
			}
			// A damaged file leaves its run out, with a warning naming it:
			// the other runs still read.
			warn := func(msg string) { common{IO: f.IO, Width: f.textWidth()}.message("warning: " + oneLine(msg)) }
			return lake.OpenRead(ctx, dir, engine, lake.ReadOptions{Runs: runs, Warn: warn, Load: true})
		}
	}
	return f.fileWarehouse(creates)
}

// fileWarehouse opens the warehouse file of --db, whatever --lake says.
// Only a command that ingests (creates) makes the file when it does not
// exist: a mistyped --db would otherwise leave an empty warehouse behind
// and report nothing, or "succeed" at changing nothing.
func (f *Factory) fileWarehouse(creates bool) target.Opener {
	return func(ctx context.Context, write bool) (*schema.Warehouse, error) {
		path := f.dbPath()
		opt, err := f.engine()
		if err != nil {
			return nil, err
		}
		opt.ReadOnly = !write
		opt.MustExist = !creates
		w, err := schema.Open(ctx, path, opt)
		var missing *schema.NoWarehouseError
		if errors.As(err, &missing) {
			return nil, fmt.Errorf("%w: ingest traces first ('tracehouse ingest PATH') or point --db at one", err)
		}
		if err != nil || !write {
			return w, err
		}
		// Runs an ingest killed before any of their files landed.
		if err := ingest.DropEmptyRuns(ctx, w.DB); err != nil {
			w.Close()
			return nil, err
		}
		return w, nil
	}
}

// engine is how every database a command opens is set up: DuckDB's worker
// threads capped by TRACEHOUSE_THREADS, for people sharing a machine
// (unset: one per core), and the log size past which a commit checkpoints
// by TRACEHOUSE_CHECKPOINT_BYTES (unset: DuckDB's 16 MiB), which lets the
// tests of a disk filling at a checkpoint fill a small one with little data.
func (f *Factory) engine() (schema.Options, error) {
	var o schema.Options
	if v := f.Getenv("TRACEHOUSE_THREADS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return o, fmt.Errorf("TRACEHOUSE_THREADS=%q: want a whole number of threads, 1 or more", v)
		}
		o.Threads = n
	}
	if v := f.Getenv("TRACEHOUSE_CHECKPOINT_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return o, fmt.Errorf("TRACEHOUSE_CHECKPOINT_BYTES=%q: want a whole number of bytes, 1 or more", v)
		}
		o.CheckpointBytes = n
	}
	return o, nil
}

// outputFormat parses --format.
func (f *Factory) outputFormat() (report.Format, error) {
	fm, err := report.ParseFormat(f.format)
	if err != nil {
		return "", &usageError{err}
	}
	return fm, nil
}

// textWidth is the width text tables fit: none with --wide, else the
// terminal's, else $COLUMNS, else 120 (a CI log, a pipe).
func (f *Factory) textWidth() int {
	if f.wide {
		return 0
	}
	if f.IO.OutTTY && f.IO.TermCols > 0 {
		return f.IO.TermCols
	}
	if n, err := strconv.Atoi(f.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 120
}

// common are the dependencies every command's options hold besides its
// flags.
type common struct {
	IO *IOStreams
	// Warehouse opens the warehouse, for writing or read-only.
	Warehouse target.Opener
	// WarehouseFor is Warehouse for reading the runs labelled runs only
	// (a lake then names their files only: Factory.warehouseFor).
	WarehouseFor func(runs []string) target.Opener
	// Ctx is the command's context, cancelled by SIGINT and SIGTERM.
	Ctx context.Context
	// Width is the width text output fits (0: no limit, --wide).
	Width int
}

// render writes a report to stdout in format fm, text fitted to Width
// (reports with wide tables: triage, sql; listings print whole).
func (c common) render(fm report.Format, d report.Doc) error {
	d.Width = c.Width
	return report.Render(c.IO.Out, fm, d)
}

// message writes lines to stderr wrapped to Width, as text output is
// (capture's notes and summaries). An error line is never wrapped: it is
// one line, to be grepped for whole.
func (c common) message(lines ...string) {
	// One write, so that notices from concurrent workers never interleave.
	// Text rendering of plain lines fails only when stderr does, and
	// then there is nowhere left to say so.
	var b bytes.Buffer
	_ = report.Render(&b, report.Text, report.Doc{Blocks: []any{report.Lines(lines)}, Width: c.Width})
	_, _ = c.IO.ErrOut.Write(b.Bytes())
}

func (f *Factory) common(cmd *cobra.Command) common {
	creates := cmd.Annotations[createsAnnotation] == "yes"
	return common{IO: f.IO, Warehouse: f.warehouseOf(nil, creates),
		WarehouseFor: func(runs []string) target.Opener { return f.warehouseOf(runs, creates) },
		Ctx:          cmd.Context(), Width: f.textWidth()}
}

// createsAnnotation marks a command that ingests traces (ingest, capture,
// and the reports given PATHs): only those create a warehouse file that
// does not exist yet.
const createsAnnotation = "tracehouse/creates"

var creates = map[string]string{createsAnnotation: "yes"}

// warehouseFor is WarehouseFor(runs), or Warehouse when options were made
// without it (tests).
func (c common) warehouseFor(runs []string) target.Opener {
	if c.WarehouseFor == nil {
		return c.Warehouse
	}
	return c.WarehouseFor(runs)
}

// writesAnnotation marks a command that changes stored rows
// (target.Writes): target.CheckLake refuses it a lake.
const writesAnnotation = "tracehouse/writes"

var writes = map[string]string{writesAnnotation: "yes"}

// checkLake validates --lake against the command about to run
// (target.CheckLake decides).
func (f *Factory) checkLake(cmd *cobra.Command) error {
	if f.lake == "" {
		return nil
	}
	access := target.Reads
	if cmd.Annotations[writesAnnotation] == "yes" {
		access = target.Writes
	}
	if err := target.CheckLake(access, cmd.CommandPath()); err != nil {
		return &usageError{err}
	}
	if f.db != "" && cmd.Name() != "export" {
		return usagef("--db and --lake both name where runs are: give one (only export reads --db and writes --lake)")
	}
	return nil
}
