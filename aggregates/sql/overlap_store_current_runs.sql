-- overlap_store_current_runs: overlap_store_current.sql for several runs in
-- one statement (one per run planned the fingerprint again each time): the
-- runs of $runs whose saved per-kernel overlap is current. Each run's
-- fingerprint is computed in a projection, from a qualified run id, and
-- compared by a join, not in a WHERE clause (see overlap_store_current.sql);
-- TestSomeRunsBatched compares this with the one-run statement.
-- Parameters: $runs (a list of run ids).
-- Columns: run_id, one row per current run.
SELECT f.run_id
FROM (SELECT r.run_id, _overlap_fp(r.run_id, NULL) AS fp
      FROM (SELECT unnest($runs) AS run_id) r) f
JOIN kernel_overlap_runs o ON o.run_id = f.run_id AND o.fingerprint = f.fp
