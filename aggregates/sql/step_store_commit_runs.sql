-- step_store_commit_runs: step_store_commit.sql for every run of a batch
-- in one statement (as overlap_store_commit_runs.sql).
-- Parameters: $runs (a list of run ids).
INSERT INTO step_store_runs
SELECT r.run_id, _steps_fingerprint(r.run_id), now()::TIMESTAMP
FROM (SELECT unnest($runs) AS run_id) r
