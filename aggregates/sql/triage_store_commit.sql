-- triage_store_commit: record run $run's saved triage report (its rows
-- inserted in the same transaction), with the run's fingerprint now.
-- Parameters: $run, $rank, $min_share, $overlap_rows, $recipe.
-- $stored_at: the transaction's now(), asked apart (txNow in
-- aggregates/rank_store.go), so that DuckDB plans this statement once.
INSERT INTO triage_store_runs
SELECT $run, $rank, $min_share, $overlap_rows, $recipe, _triage_fingerprint($run), $stored_at::TIMESTAMP
