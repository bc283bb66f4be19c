-- triage_runs_of_traces: which runs `tracehouse triage PATH` reports on,
-- once the path's files are ingested (or found already ingested).
--
-- One row per run holding at least one of the traces $trace_ids, sorted by
-- label (the order of the reports).
--
-- Parameters: $trace_ids (a list of trace_id).
-- Columns: run_id, label.
SELECT DISTINCT r.run_id, r.label
FROM runs r
JOIN traces t USING (run_id)
WHERE list_contains($trace_ids::BIGINT[], t.trace_id::BIGINT)
ORDER BY r.label
