-- step_store_commit: last step of saving a run's step aggregates: record the
-- run's fingerprint, which makes the step_*_cached macros read the saved
-- rows for as long as the run's kernels, their categories and steps stay
-- the same. step_store_commit_runs.sql records several runs at once.
-- Parameters: $run.
-- $stored_at: the transaction's now(), asked apart (txNow in
-- aggregates/rank_store.go), so that DuckDB plans this statement once.
INSERT INTO step_store_runs
VALUES ($run, _steps_fingerprint($run), $stored_at::TIMESTAMP)
