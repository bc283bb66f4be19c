package lake

import (
	"fmt"
	"strings"
)

// Spark SQL and Trino read the lake through tables over its directories
// (one per table, named <table>_files, partitioned by the directories'
// keys) and views with the warehouse's names that keep, as views.sql does
// for DuckDB, only rows of committed traces and one row per name or site.
// The files below are generated from the schema, so they always match it;
// LakeURI stands for the lake's location, replaced by the user.

// LakeURI is the placeholder for the lake's location in spark.sql and
// trino.sql.
const LakeURI = "LAKE_URI"

// TrinoSchema is the Trino schema trino.sql's partition syncs name.
const TrinoSchema = "tracehouse"

// partitionKeys are the directory keys of a table's layout.
func partitionKeys(t Table) []string {
	switch t.layout {
	case byTrace:
		return []string{"run"}
	case byTraceStageRank:
		return []string{"run", "stage", "rank"}
	}
	return nil
}

// viewBody is the portable SELECT of a view over <table>_files: standard
// SQL both engines accept (no DISTINCT ON, no casts).
func viewBody(t Table, cols []column, quote func(string) string) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = quote(c.name)
	}
	list := strings.Join(names, ", ")
	files := quote(t.Name + "_files")
	switch t.layout {
	case commit:
		return fmt.Sprintf("SELECT %s FROM %s", list, files)
	case byRun:
		return fmt.Sprintf("SELECT %s FROM %s WHERE %s IN (SELECT %[3]s FROM %s)", list, files, quote("run_id"), quote("traces"))
	case dimension:
		return fmt.Sprintf("SELECT %s FROM (SELECT %[1]s, row_number() OVER (PARTITION BY %s ORDER BY %s) AS lake_row FROM %s) AS d WHERE lake_row = 1",
			list, quote(t.key), quote("name"), files)
	default:
		return fmt.Sprintf("SELECT %s FROM %s WHERE %s IN (SELECT %[3]s FROM %s)", list, files, quote("trace_id"), quote("traces"))
	}
}

// sparkSQL is _tracehouse/spark.sql.
func sparkSQL(version int, cols map[string][]column) string {
	q := func(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
	var b strings.Builder
	fmt.Fprintf(&b, `-- tracehouse lake, schema version %d, for Spark SQL: tables over the lake's
-- directories (schema and partitions discovered from the files) and views with
-- the warehouse's names. Replace %s with the lake's location (a path, hdfs://,
-- s3a://...). After new runs arrive, run the MSCK REPAIR TABLE lines again.
-- Run labels that read as numbers or dates: SET
-- spark.sql.sources.partitionColumnTypeInference.enabled = false first.
`, version, LakeURI)
	for _, t := range viewOrder() {
		fmt.Fprintf(&b, "\nCREATE TABLE IF NOT EXISTS %s USING parquet OPTIONS (mergeSchema 'true') LOCATION '%s/%s';\n",
			q(t.Name+"_files"), LakeURI, t.Name)
		if len(partitionKeys(t)) > 0 {
			fmt.Fprintf(&b, "MSCK REPAIR TABLE %s;\n", q(t.Name+"_files"))
		}
		fmt.Fprintf(&b, "CREATE OR REPLACE VIEW %s AS %s;\n", q(t.Name), viewBody(t, cols[t.Name], q))
	}
	return b.String()
}

// trinoType is the Trino type of a warehouse column (as the lake's files
// hold it: JSON as VARCHAR; timestamps at the Hive connector's default
// millisecond precision).
func trinoType(duck string) (string, error) {
	switch duck {
	case "INTEGER":
		return "integer", nil
	case "BIGINT":
		return "bigint", nil
	case "DOUBLE":
		return "double", nil
	case "BOOLEAN":
		return "boolean", nil
	case "VARCHAR", "JSON":
		return "varchar", nil
	case "TIMESTAMP":
		return "timestamp(3)", nil
	case "VARCHAR[]":
		return "array(varchar)", nil
	case "MAP(VARCHAR, VARCHAR)":
		return "map(varchar, varchar)", nil
	}
	return "", fmt.Errorf("lake: no Trino type for DuckDB type %s: add it to lake/engines.go", duck)
}

// trinoSQL is _tracehouse/trino.sql, for the Hive connector.
func trinoSQL(version int, cols map[string][]column) (string, error) {
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	var b strings.Builder
	fmt.Fprintf(&b, `-- tracehouse lake, schema version %d, for Trino's Hive connector: external
-- tables over the lake's directories and views with the warehouse's names.
-- Run it in schema %[3]s (CREATE SCHEMA hive.%[3]s; USE hive.%[3]s), with
-- %[2]s replaced by the lake's location (s3://..., hdfs://...). After new runs
-- arrive, run the sync_partition_metadata lines again.
`, version, LakeURI, TrinoSchema)
	for _, t := range viewOrder() {
		keys := partitionKeys(t)
		var defs []string
		for _, c := range cols[t.Name] {
			if slicesContains(keys, c.name) {
				continue
			}
			typ, err := trinoType(c.typ)
			if err != nil {
				return "", err
			}
			defs = append(defs, q(c.name)+" "+typ)
		}
		if t.layout == commit {
			defs = append(defs, q(colLakeOverlap)+" boolean", q(colLakeSteps)+" boolean")
		}
		// partition columns come last, in directory order
		for _, k := range keys {
			typ := "varchar"
			if k == "rank" {
				typ = "integer"
			}
			defs = append(defs, q(k)+" "+typ)
		}
		with := fmt.Sprintf("format = 'PARQUET', external_location = '%s/%s'", LakeURI, t.Name)
		if len(keys) > 0 {
			quoted := make([]string, len(keys))
			for i, k := range keys {
				quoted[i] = "'" + k + "'"
			}
			with += ", partitioned_by = ARRAY[" + strings.Join(quoted, ", ") + "]"
		}
		fmt.Fprintf(&b, "\nCREATE TABLE IF NOT EXISTS %s (\n    %s\n) WITH (%s);\n", q(t.Name+"_files"), strings.Join(defs, ",\n    "), with)
		if len(keys) > 0 {
			fmt.Fprintf(&b, "CALL system.sync_partition_metadata('%s', '%s', 'FULL');\n", TrinoSchema, t.Name+"_files")
		}
		fmt.Fprintf(&b, "CREATE OR REPLACE VIEW %s AS %s;\n", q(t.Name), viewBody(t, cols[t.Name], q))
	}
	return b.String(), nil
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
