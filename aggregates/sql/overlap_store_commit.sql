-- overlap_store_commit: last step of saving a run's overlap: record the
-- run's fingerprint, which makes kernel_overlap_cached read the saved rows
-- for as long as the run's kernels and their categories stay the same.
-- overlap_store_commit_runs.sql records several runs at once.
-- Parameters: $run.
-- $stored_at: the transaction's now(), asked apart (txNow in
-- aggregates/rank_store.go), so that DuckDB plans this statement once.
INSERT INTO kernel_overlap_runs
VALUES ($run, _overlap_fingerprint($run), $stored_at::TIMESTAMP)
