-- overlap_store_commit_runs: overlap_store_commit.sql for every run of a
-- batch in one statement. The fingerprint is then correlated with the
-- run, which costs a single run 2-4 ms more than the literal form, and
-- saves a batch of many small runs one planned statement each.
-- Parameters: $runs (a list of run ids).
-- $stored_at: the transaction's now(), asked apart (txNow in
-- aggregates/rank_store.go), so that DuckDB plans this statement once.
INSERT INTO kernel_overlap_runs
SELECT r.run_id, _overlap_fingerprint(r.run_id), $stored_at::TIMESTAMP
FROM (SELECT unnest($runs) AS run_id) r
