-- steps_fresh: which runs have saved step aggregates (step_total_store,
-- step_kernel_store) that are current: step_store_runs holds the run with
-- the fingerprint its kernels and steps have now (_steps_fingerprint). The
-- compare and history queries take the answer as $fresh, so that one check
-- per run serves every query instead of one per macro call (each check
-- reads every kernel of the run).
--
-- Parameters: $runs (a list of run_id).
--
-- Columns: run_id, fresh (false when nothing is saved or the copy is
-- stale). One row per distinct run of $runs, sorted by run_id.
SELECT r.run_id,
       coalesce(s.fingerprint = _steps_fingerprint(r.run_id), false) AS fresh
FROM (SELECT DISTINCT unnest($runs::BIGINT[])::INTEGER AS run_id) r
LEFT JOIN step_store_runs s USING (run_id)
ORDER BY r.run_id
