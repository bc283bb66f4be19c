package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/lake"
	"github.com/tracehouse/tracehouse/target"
)

// ExportOptions are the parsed flags of `tracehouse export`.
type ExportOptions struct {
	common
	Lake string
	Runs []string // labels; empty = every run
}

func newCmdExport(f *Factory, runF func(*ExportOptions) error) *cobra.Command {
	opts := &ExportOptions{}
	return &cobra.Command{
		Use:   "export --lake DIR [RUN...]",
		Short: "Write the warehouse's runs into a Parquet lake",
		Long: `Write runs of the warehouse (--db) into the Parquet lake DIR (created when
needed): every table as zstd Parquet files, event tables Hive-partitioned by
run, stage and rank, one file per trace and partition named by the trace's
content hash, and DIR/_tracehouse/ with the schema version, the catalog and
views.sql (DuckDB views over the files).

Exporting again writes only the traces not in the lake yet. Each trace
appears whole or not at all: its files are written under a temporary name,
moved into place, and its row in DIR/traces/ comes last. An empty lake keeps
the warehouse's ids, so reports over --lake DIR equal those over the
warehouse. With no RUN, every run is exported.

Read the lake with --lake DIR on runs, sql, triage and compare; with DuckDB,
Spark or Trino as the README's "Beyond one machine" shows.`,
		Example: `  tracehouse export --lake /shared/lake
  tracehouse --db nightly.duckdb export --lake /shared/lake nightly-2026-11-29
  tracehouse triage --lake /shared/lake nightly-2026-11-29`,
		ValidArgsFunction: completeRuns(f, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.common = f.common(cmd)
			opts.Warehouse = f.fileWarehouse(false)
			opts.Lake = f.lake
			opts.Runs = args
			if opts.Lake == "" {
				return usagef("export writes a lake: add --lake DIR")
			}
			if runF != nil {
				return runF(opts)
			}
			return exportRun(opts)
		},
	}
}

func exportRun(opts *ExportOptions) error {
	w, err := opts.Warehouse(opts.Ctx, false)
	if err != nil {
		return err
	}
	defer w.Close()
	runs, err := target.SelectRuns(opts.Ctx, w, opts.Runs)
	if err != nil {
		return err
	}
	var ids []int64
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	res, err := lake.Write(opts.Ctx, w.DB, opts.Lake, lake.WriteOptions{Runs: ids})
	if res != nil {
		exportSummary(opts, res)
	}
	return err
}

// exportSummary prints a note per trace the lake holds under another run
// and one line of totals.
func exportSummary(opts *ExportOptions, res *lake.WriteResult) {
	runs := map[string]bool{}
	already := 0
	for _, t := range res.Traces {
		switch t.Status {
		case lake.StatusWritten:
			runs[t.Run] = true
		case lake.StatusAlready:
			already++
		case lake.StatusOtherRun:
			opts.message(fmt.Sprintf("note: %s: the same content is in the lake under run %s; not added to run %s", t.Path, t.LakeRun, t.Run))
			already++
		}
	}
	line := fmt.Sprintf("exported %d trace(s) of %d run(s) to %s", res.Written(), len(runs), opts.Lake)
	if already > 0 {
		line += fmt.Sprintf(", %d already there", already)
	}
	opts.message(line)
}
