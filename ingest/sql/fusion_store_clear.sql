-- fusion_store_clear: drop the saved fuse-pattern rows of run $run.
-- Parameters: $run.
DELETE FROM fusion_match_store WHERE run_id = $run
