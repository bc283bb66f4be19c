-- overlap_store_clear: second step of saving a run's overlap: drop the old
-- rows of run $run from kernel_overlap_store.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
DELETE FROM kernel_overlap_store WHERE CASE WHEN $runs IS NULL THEN run_id = $run ELSE _run_in(run_id, $runs) END
