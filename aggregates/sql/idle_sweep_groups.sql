-- idle_sweep_groups: the device groups (_idle_gaps_for's trace, rank,
-- stage, step, device) of the (trace, step) pairs from ($lo_trace,
-- $lo_step) to ($hi_trace, $hi_step) of the runs whose idle rows are being
-- saved, in idle_sweep_kernels.sql's order, with their GPU events and
-- whether the step is one whose gaps may be among the longest
-- (_idle_worst_gaps_for: a steps row, not an edge).
-- Parameters: as idle_sweep_kernels.sql.
-- Columns: run_id, trace_id, rank, stage, step, device, kernels, worst.
SELECT any_value(k.run_id) AS run_id, k.trace_id, k.rank, k.stage, k.step, k.device, count(*) AS kernels,
       coalesce(NOT any_value(s.edge), false) AS worst
FROM kernels k
LEFT JOIN (SELECT * FROM steps WHERE trace_id BETWEEN $lo_trace AND $hi_trace) s
       ON s.trace_id = k.trace_id AND s.step = k.step
WHERE CASE WHEN $runs IS NULL THEN k.run_id = $run ELSE _run_in(k.run_id, $runs) END
  AND k.step IS NOT NULL
  AND k.trace_id BETWEEN $lo_trace AND $hi_trace
  AND (k.trace_id > $lo_trace OR k.step >= $lo_step)
  AND (k.trace_id < $hi_trace OR k.step <= $hi_step)
GROUP BY k.trace_id, k.rank, k.stage, k.step, k.device
ORDER BY k.trace_id, k.rank, k.stage, k.step, k.device NULLS FIRST
