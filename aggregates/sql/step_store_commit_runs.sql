-- step_store_commit_runs: step_store_commit.sql for every run of a batch
-- in one statement (as overlap_store_commit_runs.sql).
-- Parameters: $runs (a list of run ids).
-- $stored_at: the transaction's now(), asked apart (txNow in
-- aggregates/rank_store.go), so that DuckDB plans this statement once.
INSERT INTO step_store_runs
SELECT r.run_id, _steps_fingerprint(r.run_id), $stored_at::TIMESTAMP
FROM (SELECT unnest($runs) AS run_id) r
