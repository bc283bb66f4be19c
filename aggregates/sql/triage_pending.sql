-- triage_pending: the runs whose saved triage report (triage_store, saved
-- through aggregates.SaveTriage) is missing or older than one of their
-- traces, i.e. what a finish still has to save; runs given the mapping
-- role by the caller are left out, as in finish_pending.sql, as are runs
-- whose save failed $max_attempts times. A report made stale otherwise (a
-- new catalog, a reclassification, another binary) is not saved again:
-- its readers compute it, as for the other copies. Nor are runs whose
-- traces were all ingested before the warehouse had a triage store
-- (migration 0026's applied_at): a warehouse of many runs upgraded to it
-- would otherwise spend its next ingest computing every old run's report
-- (1,000 runs: about 300 CPU-s), where their triage computes the report
-- as it always did. Nor are runs of more than $max_gpu_events GPU events
-- (kernels, memcpys and memsets; aggregates.TriageMaxGPUEvents): their
-- report would cost the finish seconds and memory past its bound, and
-- their triage computes it. (Both times are DuckDB's now(), so a run misjudged
-- by a change of time zone between the two is only saved or not, never
-- read stale.)
--
-- One row per run, by run_id.
-- Columns: run_id.
-- Parameters: $max_attempts, $max_gpu_events.
SELECT t.run_id
FROM traces t
LEFT JOIN triage_store_runs s ON s.run_id = t.run_id
LEFT JOIN finish_failures f ON f.run_id = t.run_id AND f.store = 'triage report'
GROUP BY t.run_id
HAVING bool_or(t.role <> 'mapping' OR t.role_source <> 'flag')
   AND (any_value(s.stored_at) IS NULL OR max(t.ingested_at) > any_value(s.stored_at))
   AND (coalesce(any_value(f.attempts), 0) < $max_attempts OR max(t.ingested_at) > any_value(f.traces_at))
   AND sum(t.kernel_events + t.memcpy_events + t.memset_events) <= $max_gpu_events
   AND max(t.ingested_at) > coalesce((SELECT applied_at FROM schema_migrations WHERE version = 26), '-infinity'::TIMESTAMP)
ORDER BY t.run_id
