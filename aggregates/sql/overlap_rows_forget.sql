-- overlap_rows_forget: first step of saving a run's overlap-opportunity rows
-- (see aggregates.SaveOverlapRows): mark every saved copy of run $run as
-- absent, so that readers compute until the new copies are complete.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once.
DELETE FROM overlap_row_runs WHERE CASE WHEN $runs IS NULL THEN run_id = $run ELSE _run_in(run_id, $runs) END
