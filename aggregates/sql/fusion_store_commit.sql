-- fusion_store_commit: last step of saving the fuse-pattern rows of run
-- $run: record, for each of its ranks saved, the run's fingerprint, which
-- makes readers use the saved rows for as long as the run's kernels, the
-- catalog and the run's gates stay the same. fusion_store_commit_runs.sql
-- records several runs at once.
-- Parameters: $run, $ranks (a list of its ranks).
INSERT INTO fusion_store_runs
SELECT $run, r.rank, _fusion_fingerprint($run), now()::TIMESTAMP
FROM (SELECT unnest($ranks) AS rank) r
