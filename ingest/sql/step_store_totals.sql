-- step_store_totals: compute step_totals_for($run) into step_total_store.
-- Parameters: $run.
INSERT INTO step_total_store
SELECT * FROM step_totals_for($run)
