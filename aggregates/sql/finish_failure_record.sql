-- finish_failure_record: remember that saving copy $store of run $run
-- failed with $error (migration 0021), as of the run's newest trace: the
-- attempts go on counting while the run's traces stay the same, and start
-- again from 1 once one of them is newer. Returns the attempts so far (no
-- row: the run has no traces any more).
-- Parameters: $run, $store, $error.
INSERT OR REPLACE INTO finish_failures
SELECT $run, $store, t.traces_at,
       CASE WHEN f.traces_at = t.traces_at THEN f.attempts + 1 ELSE 1 END,
       now()::TIMESTAMP, $error
FROM (SELECT max(ingested_at) AS traces_at FROM traces WHERE run_id = $run HAVING count(*) > 0) t
LEFT JOIN finish_failures f ON f.run_id = $run AND f.store = $store
RETURNING attempts
