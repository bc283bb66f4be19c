-- comm_swept_current: the runs of $runs whose communication overlap rows
-- (comm_overlap_store) were swept with their per-kernel overlap while their
-- events were what they are now: the record (comm_overlap_runs) holds the
-- run's current _overlap_fingerprint, which changes with every input of
-- _comm_parts_for. The step aggregates' save keeps those rows and computes
-- the others'. The fingerprint is computed in a projection and compared
-- above it (see overlap_store_current_runs.sql).
-- Parameters: $runs (a list of run ids).
-- Columns: run_id, one row per run whose rows are current.
SELECT run_id
FROM (SELECT c.run_id, c.fingerprint = _overlap_fingerprint(c.run_id) AS current
      FROM comm_overlap_runs c
      WHERE _run_in(c.run_id, $runs))
WHERE current
