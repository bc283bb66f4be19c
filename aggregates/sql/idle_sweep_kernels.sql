-- idle_sweep_kernels: the GPU events of the (trace, step) pairs from
-- ($lo_trace, $lo_step) to ($hi_trace, $hi_step) of the runs whose idle
-- rows are being saved, as aggregates/idle_sweep.go sweeps them: by device
-- group (_idle_gaps_for's trace, rank, stage, step, device: their keys and
-- sizes are idle_sweep_groups.sql's rows, in this order), then start, then
-- id, with what _idle_gaps_for and _idle_worst_gaps_for read of each
-- (sqllib/idle.sql): its launch's start and thread, its name and its
-- Python site (its own, else its launch's).
-- Parameters: $lo_trace, $lo_step, $hi_trace, $hi_step, and $run, or with
-- $runs (a list of run ids, $run NULL) every run listed.
-- Columns: stream, kernel_id, ts_ns, end_ns, graph_launch, launch_id,
-- launch_ts_ns, pid, tid, name_id, site_id.
SELECT k.stream, k.kernel_id, k.ts_ns, k.ts_ns + k.dur_ns AS end_ns, k.graph_launch, k.launch_id,
       l.ts_ns AS launch_ts_ns, l.pid, l.tid, k.name_id, coalesce(k.site_id, l.site_id) AS site_id
FROM kernels k
LEFT JOIN (SELECT * FROM launches WHERE trace_id BETWEEN $lo_trace AND $hi_trace) l ON l.launch_id = k.launch_id
WHERE CASE WHEN $runs IS NULL THEN k.run_id = $run ELSE _run_in(k.run_id, $runs) END
  AND k.step IS NOT NULL
  AND k.trace_id BETWEEN $lo_trace AND $hi_trace
  AND (k.trace_id > $lo_trace OR k.step >= $lo_step)
  AND (k.trace_id < $hi_trace OR k.step <= $hi_step)
ORDER BY k.trace_id, k.rank, k.stage, k.step, k.device NULLS FIRST, k.ts_ns, k.kernel_id
