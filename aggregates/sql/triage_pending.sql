-- triage_pending: the runs whose saved triage report (triage_store, saved
-- through aggregates.SaveTriage) is missing or older than one of their
-- traces, i.e. what a finish still has to save; runs given the mapping
-- role by the caller are left out, as in overlap_pending.sql, as are runs
-- whose save failed $max_attempts times. A report made stale otherwise (a
-- new catalog, a reclassification, another binary) is not saved again:
-- its readers compute it, as for the other copies.
--
-- One row per run, by run_id.
-- Columns: run_id.
-- Parameters: $max_attempts.
SELECT t.run_id
FROM traces t
LEFT JOIN triage_store_runs s ON s.run_id = t.run_id
LEFT JOIN finish_failures f ON f.run_id = t.run_id AND f.store = 'triage report'
GROUP BY t.run_id
HAVING bool_or(t.role <> 'mapping' OR t.role_source <> 'flag')
   AND (any_value(s.stored_at) IS NULL OR max(t.ingested_at) > any_value(s.stored_at))
   AND (coalesce(any_value(f.attempts), 0) < $max_attempts OR max(t.ingested_at) > any_value(f.traces_at))
ORDER BY t.run_id
