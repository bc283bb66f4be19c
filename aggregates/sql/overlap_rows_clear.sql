-- overlap_rows_clear: drop the saved overlap-opportunity rows of run $run.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once.
DELETE FROM overlap_row_store WHERE CASE WHEN $runs IS NULL THEN run_id = $run ELSE _run_in(run_id, $runs) END
