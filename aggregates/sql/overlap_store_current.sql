-- overlap_store_current: whether run $run's saved per-kernel overlap
-- (aggregates.SaveOverlap) is current, as the SQL library defines it for
-- every reader (_overlap_current, sqllib/overlap.sql): the step aggregates
-- and overlap rows of such runs are saved in batches from it, the others'
-- run by run. One run; overlap_store_current_runs.sql takes several.
-- Parameters: $run.
-- Columns: current (one row).
SELECT _overlap_current($run) AS current
