-- overlap_rows_clear: drop the saved overlap-opportunity rows of run $run.
-- Parameters: $run.
DELETE FROM overlap_row_store WHERE run_id = $run
