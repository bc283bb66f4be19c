-- overlap_store_clear: second step of saving a run's overlap: drop the old
-- rows of run $run from kernel_overlap_store.
-- Parameters: $run.
DELETE FROM kernel_overlap_store WHERE run_id = $run
