-- overlap_rows_commit: last step of saving the overlap-opportunity rows of
-- run $run, computed with the verdict floor $min_dur_ns: record it, for
-- each of its ranks saved, with the run's fingerprint, which makes readers
-- use the saved rows for as long as the run's kernels, the classifier and
-- the run's traces stay the same. overlap_rows_commit_runs.sql records
-- several runs at once.
-- Parameters: $run, $ranks (a list of its ranks), $min_dur_ns.
-- $stored_at: the transaction's now(), asked apart (txNow in
-- aggregates/rank_store.go), so that DuckDB plans this statement once.
INSERT INTO overlap_row_runs
SELECT $run, r.rank, $min_dur_ns, _overlap_rows_fingerprint($run), $stored_at::TIMESTAMP
FROM (SELECT unnest($ranks) AS rank) r
