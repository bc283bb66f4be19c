-- fusion_store_forget: first step of saving a run's fuse-pattern rows (see
-- aggregates.SaveFusion): mark every saved copy of run $run as absent, so that
-- readers compute until the new copies are complete.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once.
DELETE FROM fusion_store_runs WHERE CASE WHEN $runs IS NULL THEN run_id = $run ELSE _run_in(run_id, $runs) END
