-- steps_fresh: which runs have saved step aggregates (step_total_store,
-- step_kernel_store) that are current, as the SQL library defines it for
-- every reader (_steps_current, sqllib/steps.sql). The compare and history
-- queries take the answer as $fresh, so that one check per run serves
-- every query instead of one per macro call (each check reads every
-- kernel of the run).
--
-- Parameters: $runs (a list of run_id).
--
-- Columns: run_id, fresh (false when nothing is saved or the copy is
-- stale). One row per distinct run of $runs, sorted by run_id.
SELECT r.run_id, _steps_current(r.run_id) AS fresh
FROM (SELECT DISTINCT unnest($runs::BIGINT[])::INTEGER AS run_id) r
ORDER BY r.run_id
