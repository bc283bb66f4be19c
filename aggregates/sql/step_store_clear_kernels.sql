-- step_store_clear_kernels: drop the saved per-step kernel rows of run $run.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
DELETE FROM step_kernel_store WHERE CASE WHEN $runs IS NULL THEN run_id = $run ELSE _run_in(run_id, $runs) END
