-- compare_steps: the per-step samples of one run (steps as sqllib/steps.sql
-- defines them): one row per (stage, rank, trace, step) of run $run, edge steps
-- left out unless $keep_edges. Sorted by stage (prefill, decode, mixed,
-- unknown, others by name), rank, trace (by path, then content hash: the
-- i-th steps of the ranks are one sample, so the traces of a rank come in
-- an order that does not follow the order they were ingested in, as
-- trace_id does), step.
--
-- Parameters: $run; $rank (NULL = every rank); $keep_edges; $fresh (true
-- when the run's saved step aggregates are current, steps_fresh.sql: they
-- are read; false computes them, as step_*_cached would).
--
-- Columns:
--   stage, rank, trace_id, step
--   source           how the trace's steps were found (steps.source;
--                    'window' = no step evidence, the trace is one sample)
--   batch_size, tokens  from the step's annotation, NULL when it does not say
--   kernels          GPU events in the step (launches)
--   kernel_ns        summed kernel time
--   busy_ns          GPU busy time: union of the step's intervals per device
--   window_ns        step time: the step's GPU window, last end - first start
--   idle_ns          window_ns - busy_ns
--   exposed_comm_ns  communication time not hidden under compute
--   idle_host_bound_ns, idle_launch_latency_ns, idle_sync_ns,
--   idle_graph_internal_ns, idle_other_ns
--                    idle_ns by cause (sqllib/idle.sql: the step's device
--                    rows summed over its devices); NULL, all five, when
--                    they do not add up to idle_ns (a step over several
--                    devices, whose windows differ from the step's)
WITH _i AS (
    SELECT * FROM _idle_step_causes(CASE WHEN $fresh THEN [$run::BIGINT] ELSE []::BIGINT[] END,
                                    CASE WHEN NOT $fresh THEN $run END)
)
SELECT t.stage, t.rank, t.trace_id, t.step, s.source, s.batch_size, s.tokens,
       t.kernels, t.kernel_ns, t.busy_ns, t.window_ns, t.window_ns - t.busy_ns AS idle_ns,
       t.exposed_comm_ns,
       CASE WHEN i.idle_ns = t.window_ns - t.busy_ns THEN i.host_bound_ns END AS idle_host_bound_ns,
       CASE WHEN i.idle_ns = t.window_ns - t.busy_ns THEN i.launch_latency_ns END AS idle_launch_latency_ns,
       CASE WHEN i.idle_ns = t.window_ns - t.busy_ns THEN i.sync_ns END AS idle_sync_ns,
       CASE WHEN i.idle_ns = t.window_ns - t.busy_ns THEN i.graph_internal_ns END AS idle_graph_internal_ns,
       CASE WHEN i.idle_ns = t.window_ns - t.busy_ns THEN i.other_ns END AS idle_other_ns
FROM (SELECT * FROM step_total_store WHERE run_id = $run AND $fresh
          UNION ALL SELECT * FROM step_totals_for($run, skip := $fresh)) t
JOIN steps s ON s.trace_id = t.trace_id AND s.step = t.step
JOIN traces tr ON tr.trace_id = t.trace_id
LEFT JOIN _i i ON i.trace_id = t.trace_id AND i.rank = t.rank AND i.stage = t.stage AND i.step = t.step
WHERE ($rank IS NULL OR t.rank = $rank) AND ($keep_edges OR NOT s.edge)
ORDER BY CASE t.stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                      WHEN 'unknown' THEN 3 ELSE 4 END,
         t.stage, t.rank, tr.path, tr.content_hash, t.step
