-- idle_sweep_steps: the (trace, step) pairs of the runs whose idle rows
-- are being saved, in order, with their GPU events in steps, so that
-- aggregates/idle_sweep.go reads them in ranges (_idle_gaps_for's events:
-- those with a step).
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed.
-- Columns: trace_id, step, kernels.
SELECT k.trace_id, k.step, count(*) AS kernels
FROM kernels k
WHERE CASE WHEN $runs IS NULL THEN k.run_id = $run ELSE _run_in(k.run_id, $runs) END
  AND k.step IS NOT NULL
GROUP BY k.trace_id, k.step
ORDER BY k.trace_id, k.step
