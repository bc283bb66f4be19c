-- overlap_store_forget: first step of saving a run's overlap (see
-- aggregates.SaveOverlap): mark the saved copy of run $run as absent, so that
-- kernel_overlap_cached computes until the new copy is complete.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
DELETE FROM kernel_overlap_runs WHERE CASE WHEN $runs IS NULL THEN run_id = $run ELSE _run_in(run_id, $runs) END
