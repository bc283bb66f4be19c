-- overlap_store_clear_busy: second step of saving a run's overlap, with
-- overlap_store_clear: drop the old rows of run $run from device_busy_store.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
DELETE FROM device_busy_store WHERE CASE WHEN $runs IS NULL THEN run_id = $run ELSE _run_in(run_id, $runs) END
