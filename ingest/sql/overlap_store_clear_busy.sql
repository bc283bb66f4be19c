-- overlap_store_clear_busy: second step of saving a run's overlap, with
-- overlap_store_clear: drop the old rows of run $run from device_busy_store.
-- Parameters: $run.
DELETE FROM device_busy_store WHERE run_id = $run
