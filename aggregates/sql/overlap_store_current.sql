-- overlap_store_current: whether run $run's saved per-kernel overlap
-- (aggregates.SaveOverlap) is current: queries/overlap_by_kernel.sql reads it
-- for a batch of runs, and computes the others' rows rank by rank
-- (aggregates.SaveOverlapRows). One run; overlap_store_current_runs.sql takes
-- several. With run_id from a column (one statement for a list of runs),
-- DuckDB 1.5.6 compared the fingerprint's correlated subquery wrongly in a
-- WHERE clause and matched no run, so that form computes it in a
-- projection.
-- Parameters: $run.
-- Columns: current (one row).
SELECT count(*) > 0 AS current
FROM kernel_overlap_runs
WHERE run_id = $run AND fingerprint = _overlap_fp($run, NULL)
