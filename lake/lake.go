// Package lake keeps the warehouse's tables as Parquet files under one
// directory (a "lake") that DuckDB, Spark and Trino read with the same SQL,
// and that many processes on many machines write into at once with no lock
// and no central writer (README "Beyond one machine: a Parquet lake").
//
// Layout (DIR is the lake):
//
//	DIR/runs/<run_id>.parquet                                one row per run, first writer wins
//	DIR/traces/<content hash>.parquet                        one row per trace: its commit marker
//	DIR/kernels/run=<label>/stage=<s>/rank=<r>/<hash>.parquet
//	DIR/kernel_overlap_store/run=<label>/stage=<s>/rank=<r>/<hash>.parquet
//	DIR/step_kernel_store/..., DIR/step_total_store/...      as kernels
//	DIR/launches/run=<label>/<hash>.parquet                  also cpu_ops, py_frame_events, annotations, steps
//	DIR/kernel_names/<hash>.parquet, DIR/sites/<hash>.parquet  the names one trace uses
//	DIR/<table>/_schema.parquet                              no rows: the table's columns
//	DIR/_tracehouse/schema_version, views.sql, catalog/*.parquet, sums/, ids/, tmp/
//	DIR/_tracehouse/merged/gen-<N>.json, merged/<table>/<chunk>.parquet  merged generations (merge.go)
//
// Every file holds whole warehouse rows, with the warehouse's column names
// and types (partition columns included, so a reader needs no path
// parsing; Spark and Trino take partition values from the path and ignore
// the copy in the file). The partition directories are for engines that
// prune by path; the files are what the views read. Files and directories
// starting with "_" are hidden from Spark and Trino.
//
// A trace is committed when traces/<hash>.parquet appears, after every
// other file of it: the views only show rows of committed traces, so a
// writer killed mid-way leaves nothing visible, and writing the trace again
// (the same command) replaces its leftovers. Ids are claimed in the file
// system (claim.go), so every file is final when written: no id is ever
// rewritten after the fact.
//
// A run's row file is its first writer's and never changes, though later
// writers add traces to the run: what the row says of all the run's traces
// (framework, its evidence, parallel sizes without server args) is what
// its traces say, computed by readers (Open) as an ingest computes it.
//
// Compact (merge.go) merges committed traces' files into a few large
// files per table, published as a generation by creating its manifest;
// readers read the traces a generation holds from it and every other
// committed trace from its own files (found from its checksum record,
// verify.go, not by walking directories), so an opening costs what it
// reads, not how many traces the lake holds. The traces' own files are
// never removed or changed by merging.
package lake

import (
	"fmt"
	"strings"
)

// metaDir holds the lake's own files.
const metaDir = "_tracehouse"

// layout says where a table's rows go.
type layout int

const (
	// byRun: <table>/<run_id>.parquet, written once per run (first wins).
	byRun layout = iota
	// commit: traces/<hash>.parquet, the trace's last file.
	commit
	// byTrace: <table>/run=<label>/<hash>.parquet.
	byTrace
	// byTraceStageRank: <table>/run=<label>/stage=<s>/rank=<r>/<hash>.parquet.
	byTraceStageRank
	// dimension: <table>/<hash>.parquet, the rows the trace refers to;
	// several traces repeat a row, the views keep one per key.
	dimension
)

// store names the saved aggregates a table belongs to: its rows are
// written only for runs whose saved copy is current in the source, and
// the trace row says whether they were (lake_overlap, lake_steps).
const (
	storeOverlap = "overlap"
	storeSteps   = "steps"
)

// Table is one warehouse table the lake holds as files.
type Table struct {
	Name   string
	layout layout
	key    string // dimension: the id column rows are unique by
	store  string // "" or storeOverlap / storeSteps
}

// schemaFile is each table's file of no rows and every column, in its
// directory.
const schemaFile = "_schema.parquet"

// Tables are the warehouse tables a lake holds, in commit order (traces,
// the commit marker, last).
var Tables = []Table{
	{Name: "runs", layout: byRun},
	{Name: "kernel_names", layout: dimension, key: "name_id"},
	{Name: "sites", layout: dimension, key: "site_id"},
	{Name: "kernels", layout: byTraceStageRank},
	{Name: "launches", layout: byTrace},
	{Name: "cpu_ops", layout: byTrace},
	{Name: "py_frame_events", layout: byTrace},
	{Name: "annotations", layout: byTrace},
	{Name: "steps", layout: byTrace},
	{Name: "kernel_overlap_store", layout: byTraceStageRank, store: storeOverlap},
	{Name: "step_kernel_store", layout: byTraceStageRank, store: storeSteps},
	{Name: "step_total_store", layout: byTraceStageRank, store: storeSteps},
	{Name: "idle_step_store", layout: byTraceStageRank, store: storeSteps},
	{Name: "idle_gap_store", layout: byTraceStageRank, store: storeSteps},
	{Name: "comm_overlap_store", layout: byTraceStageRank, store: storeSteps},
	{Name: "traces", layout: commit},
}

// Local are the warehouse tables a lake does not hold as row files, and
// where their content comes from instead.
var Local = map[string]string{
	"schema_migrations":    "_tracehouse/schema_version",
	"classifier_versions":  "the migrations (same binary, same rules)",
	"classifier_rules":     "the migrations",
	"family_categories":    "the migrations",
	"fusion_catalog":       "the catalog of the reading command (also _tracehouse/catalog/)",
	"fusion_catalog_steps": "the catalog of the reading command (also _tracehouse/catalog/)",
	"overlap_catalog":      "the catalog of the reading command (also _tracehouse/catalog/)",
	"kernel_overlap_runs":  "a view: runs whose every trace has lake_overlap",
	"step_store_runs":      "a view: runs whose every trace has lake_steps",
	"device_busy_store":    "a view: kernel_overlap_store summed per trace, stage and device",
	"fusion_match_store":   "not kept: a lake's readers compute fuse-pattern rows from its events",
	"fusion_store_runs":    "not kept (empty in a lake, so every saved fuse-pattern copy reads as stale)",
	"overlap_row_store":    "not kept: a lake's readers compute overlap-opportunity rows from its events",
	"overlap_row_runs":     "not kept (empty in a lake, so every saved overlap-row copy reads as stale)",
	"finish_failures":      "not kept: a warehouse's record of saves that failed, for its own later finishes",
	"comm_overlap_runs":    "not kept: a warehouse's note, for its own later step saves, of communication overlap rows swept with the overlap",
	"launch_kernel_store":  "not kept: rows per rank, of several traces; a lake's readers compute launch overhead from its events",
	"launch_stage_store":   "not kept: rows per rank, of several traces; a lake's readers compute launch overhead from its events",
	"kernel_spread_store":  "not kept: rows per rank, of several traces; a lake's readers compute duration spread from its events",
	"triage_store":         "not kept: a lake's triage computes its report from its events",
	"triage_store_runs":    "not kept (empty in a lake, so no saved triage report is read)",
}

// idRule says how a column's values change on the way into the lake.
type idRule int

const (
	keep      idRule = iota
	runID            // the run's claimed id
	traceID          // the trace's claimed id
	eventID          // trace_id * 2^32 + ordinal: the ordinal under the new trace id
	nameID           // the name's claimed id
	siteID           // the site's claimed id
	startRank        // kernel_overlap_store's sweep positions, renumbered per trace
)

// idColumns are the columns holding warehouse-assigned ids. Any other
// column named *_id must be listed in foreignIDs (ids read from the trace),
// so that a new id column cannot slip into a lake unmapped.
var idColumns = map[string]idRule{
	"run_id":            runID,
	"trace_id":          traceID,
	"kernel_id":         eventID,
	"launch_id":         eventID,
	"op_id":             eventID,
	"prev_kernel_id":    eventID,
	"next_kernel_id":    eventID,
	"name_id":           nameID,
	"next_name_id":      nameID,
	"prev_name_id":      nameID,
	"site_id":           siteID,
	"start_rank":        startRank,
	"starts_before_end": startRank,
}

var foreignIDs = map[string]bool{"external_id": true, "frame_id": true, "parent_id": true}

func ruleOf(table, column string) (idRule, error) {
	if r, ok := idColumns[column]; ok {
		return r, nil
	}
	if strings.HasSuffix(column, "_id") && !foreignIDs[column] {
		return 0, fmt.Errorf("lake: column %s.%s looks like an id: say in lake/lake.go how it maps into a lake", table, column)
	}
	return keep, nil
}

// Lake-only columns of the trace rows.
const (
	colLakeOverlap = "lake_overlap" // the trace's kernel_overlap_store rows are in the lake
	colLakeSteps   = "lake_steps"   // its step_*_store rows are
)
