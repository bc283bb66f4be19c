-- fusion_store_commit: last step of saving the fuse-pattern rows of run
-- $run's rank $rank: record the run's fingerprint, which makes readers use
-- the saved rows for as long as the run's kernels, the catalog and the
-- run's gates stay the same.
-- Parameters: $run, $rank.
INSERT INTO fusion_store_runs
VALUES ($run, $rank, _fusion_fingerprint($run), now()::TIMESTAMP)
