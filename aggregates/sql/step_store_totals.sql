-- step_store_totals: compute step_totals_for($run) into step_total_store.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
INSERT INTO step_total_store
SELECT * FROM step_totals_for($run, runs := $runs)
