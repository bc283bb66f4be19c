-- overlap_rows_forget: first step of saving a run's overlap-opportunity rows
-- (see ingest.SaveOverlapRows): mark every saved copy of run $run as
-- absent, so that readers compute until the new copies are complete.
-- Parameters: $run.
DELETE FROM overlap_row_runs WHERE run_id = $run
