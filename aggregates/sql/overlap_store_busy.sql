-- overlap_store_busy: third step of saving a run's overlap, after
-- overlap_store_rows: sum the saved per-kernel rows of run $run per (trace,
-- stage, device) into device_busy_store (what device_busy_cached returns,
-- so a report reads a handful of rows instead of a million).
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
INSERT INTO device_busy_store
SELECT * FROM _device_busy_saved($run, runs := $runs)
