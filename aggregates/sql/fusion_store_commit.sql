-- fusion_store_commit: last step of saving the fuse-pattern rows of run
-- $run: record, for each of its ranks saved, the run's fingerprint, which
-- makes readers use the saved rows for as long as the run's kernels, the
-- catalog and the run's gates stay the same. fusion_store_commit_runs.sql
-- records several runs at once.
-- Parameters: $run, $ranks (a list of its ranks).
-- $stored_at: the transaction's now(), asked apart (txNow in
-- aggregates/rank_store.go), so that DuckDB plans this statement once.
INSERT INTO fusion_store_runs
SELECT $run, r.rank, _fusion_fingerprint($run), $stored_at::TIMESTAMP
FROM (SELECT unnest($ranks) AS rank) r
