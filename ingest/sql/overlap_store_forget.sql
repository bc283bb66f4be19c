-- overlap_store_forget: first step of saving a run's overlap (see
-- ingest.SaveOverlap): mark the saved copy of run $run as absent, so that
-- kernel_overlap_cached computes until the new copy is complete.
-- Parameters: $run.
DELETE FROM kernel_overlap_runs WHERE run_id = $run
