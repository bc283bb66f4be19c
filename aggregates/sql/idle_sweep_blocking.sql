-- idle_sweep_blocking: the blocking runtime calls (_idle_blocking,
-- sqllib/idle.sql) of the traces $lo_trace to $hi_trace, by thread and
-- start, for aggregates/idle_sweep.go to find the last one before a launch
-- as _idle_gaps_for's ASOF join does.
-- Parameters: $lo_trace, $hi_trace.
-- Columns: trace_id, pid, tid, ts_ns, end_ns.
SELECT l.trace_id, l.pid, l.tid, l.ts_ns, l.ts_ns + l.dur_ns AS end_ns
FROM launches l
WHERE l.trace_id BETWEEN $lo_trace AND $hi_trace
  AND l.pid IS NOT NULL AND l.tid IS NOT NULL
  AND _idle_blocking(l.name)
ORDER BY l.trace_id, l.pid, l.tid, l.ts_ns, l.ts_ns + l.dur_ns
