-- run_traces: the traces of run $run, by trace_id, with the source of their
-- steps ('' when none are stored) and its pattern (the name of the steps
-- found by --steps-by).
-- Columns: trace_id, source, name.
-- Parameters: $run.
SELECT t.trace_id, coalesce(any_value(s.source), '') AS source, coalesce(any_value(s.name), '') AS name
FROM traces t
LEFT JOIN steps s USING (trace_id)
WHERE t.run_id = $run
GROUP BY t.trace_id
ORDER BY t.trace_id
