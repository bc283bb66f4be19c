-- idle_fresh: whether run $run's saved idle rows (idle_step_store,
-- idle_gap_store, saved with its step aggregates and guarded by the same
-- record, step_store_runs) are current: what the $fresh parameter of
-- idle_by_stage.sql and idle_worst_gaps.sql wants.
--
-- Parameters: $run; $overlap_fp: the run's overlap_fingerprint.sql, NULL
-- to compute it here (the steps fingerprint builds on it).
--
-- Columns: fresh (false when nothing is saved or the copy is stale).
SELECT coalesce(any_value(s.fingerprint) = _steps_fp($run, $overlap_fp), false) AS fresh
FROM step_store_runs s
WHERE s.run_id = $run
