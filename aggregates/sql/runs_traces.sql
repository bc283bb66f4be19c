-- runs_traces: run_traces.sql for many runs at once: the traces of each run
-- of $runs with the source of their steps ('' when none are stored) and
-- its pattern.
-- Columns: run_id, trace_id, source, name.
-- Parameters: $runs (a list of run_id).
SELECT t.run_id, t.trace_id, coalesce(any_value(s.source), '') AS source, coalesce(any_value(s.name), '') AS name
FROM traces t
LEFT JOIN steps s USING (trace_id)
WHERE list_contains($runs::BIGINT[], t.run_id::BIGINT)
GROUP BY t.run_id, t.trace_id
ORDER BY t.run_id, t.trace_id
