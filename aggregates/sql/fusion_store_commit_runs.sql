-- fusion_store_commit_runs: fusion_store_commit.sql for every rank of
-- several runs in one statement (as overlap_store_commit_runs.sql).
-- Parameters: $runs, $ranks: lists of equal length, the i-th rank being
-- one of the i-th run's.
-- $stored_at: the transaction's now(), asked apart (txNow in
-- aggregates/rank_store.go), so that DuckDB plans this statement once.
INSERT INTO fusion_store_runs
SELECT r.run_id, r.rank, _fusion_fingerprint(r.run_id), $stored_at::TIMESTAMP
FROM (SELECT unnest($runs) AS run_id, unnest($ranks) AS rank) r
