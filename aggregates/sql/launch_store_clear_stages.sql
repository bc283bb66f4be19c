-- launch_store_clear_stages: drop the saved rows of launch_stage_store of run $run.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
DELETE FROM launch_stage_store WHERE CASE WHEN $runs IS NULL THEN run_id = $run ELSE _run_in(run_id, $runs) END
