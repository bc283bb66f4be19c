-- overlap_store_current_runs: overlap_store_current.sql for several runs in
-- one statement (one per run planned the fingerprint again each time): the
-- runs of $runs whose saved per-kernel overlap is current
-- (_overlap_current), each computed in a projection and kept by a filter
-- above it; TestSomeRunsBatched compares this with the one-run statement.
-- Parameters: $runs (a list of run ids).
-- Columns: run_id, one row per current run.
SELECT run_id
FROM (SELECT r.run_id, _overlap_current(r.run_id) AS current
      FROM (SELECT unnest($runs) AS run_id) r)
WHERE current
