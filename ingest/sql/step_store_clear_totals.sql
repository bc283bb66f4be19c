-- step_store_clear_totals: drop the saved per-step totals of run $run.
-- Parameters: $run.
DELETE FROM step_total_store WHERE run_id = $run
