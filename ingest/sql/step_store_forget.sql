-- step_store_forget: first step of saving a run's step aggregates (see
-- ingest.SaveSteps): mark the saved copy of run $run as absent, so that the
-- step_*_cached macros compute until the new copy is complete.
-- Parameters: $run.
DELETE FROM step_store_runs WHERE run_id = $run
