-- fusion_store_forget: first step of saving a run's fuse-pattern rows (see
-- ingest.SaveFusion): mark every saved copy of run $run as absent, so that
-- readers compute until the new copies are complete.
-- Parameters: $run.
DELETE FROM fusion_store_runs WHERE run_id = $run
