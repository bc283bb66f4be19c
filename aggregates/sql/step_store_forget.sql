-- step_store_forget: first step of saving a run's step aggregates (see
-- aggregates.SaveSteps): mark the saved copy of run $run as absent, so that the
-- step_*_cached macros compute until the new copy is complete.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
DELETE FROM step_store_runs WHERE CASE WHEN $runs IS NULL THEN run_id = $run ELSE _run_in(run_id, $runs) END
