-- idle_by_stage: where the GPU waits (sqllib/idle.sql), per stage: the
-- steps' time split into busy time and idle time by cause, for the device
-- (the union of its streams; scope 'device') and per stream (scope
-- 'stream'), summed over the steps of the selected rank(s), edge steps
-- (steps.edge) left out, as compare does.
--
-- One row per (stage, scope, stream, part), part in busy, host_bound,
-- launch_latency, sync, graph_internal, other: per (stage, scope, stream)
-- the six add up to window_ns exactly.
-- Columns:
--   stage, scope ('device' | 'stream'), stream (NULL for 'device')
--   steps        step rows summed (one per step, rank and device; for a
--                stream, the steps it ran in)
--   window_ns    summed step time (a stream's own first start to last end)
--   window_per_step_ns  window_ns / steps
--   gaps         summed gaps
--   part, ns     the part and its summed time
--   per_step_ns  ns / steps
--   share_pct    100 * ns / window_ns (NULL when the window is 0)
--   launch_gap_ns  the launch-latency threshold the causes used
-- Sorted by stage (prefill, decode, mixed, unknown, others by name), the
-- device first, then streams, then part in the order above.
--
-- Parameters: $run; $rank (NULL = every rank); $stage (NULL = every
-- stage); $launch_gap_ns (NULL = the saved rows' 30 us); $fresh (true when
-- the run's saved idle rows are current, idle_fresh.sql).
WITH _i AS (
    SELECT i.*
    FROM _idle_steps_cached($run, launch_gap_ns := coalesce($launch_gap_ns, _idle_default_gap()), fresh := $fresh) i
    JOIN steps s ON s.trace_id = i.trace_id AND s.step = i.step
    WHERE ($rank IS NULL OR i.rank = $rank) AND ($stage IS NULL OR i.stage = $stage) AND NOT s.edge
),
_g AS (
    SELECT stage, scope, stream, count(*) AS steps,
           sum(window_ns) AS window_ns, sum(gaps) AS gaps, sum(busy_ns) AS busy_ns,
           sum(host_bound_ns) AS host_bound_ns, sum(launch_latency_ns) AS launch_latency_ns,
           sum(sync_ns) AS sync_ns, sum(graph_internal_ns) AS graph_internal_ns, sum(other_ns) AS other_ns
    FROM _i
    GROUP BY stage, scope, stream
)
SELECT g.stage, g.scope, g.stream, g.steps, g.window_ns::BIGINT AS window_ns,
       g.window_ns / g.steps AS window_per_step_ns, g.gaps::BIGINT AS gaps,
       g.part, g.part_ns::BIGINT AS ns, g.part_ns / g.steps AS per_step_ns,
       CASE WHEN g.window_ns > 0 THEN 100.0 * g.part_ns / g.window_ns END AS share_pct,
       coalesce($launch_gap_ns, _idle_default_gap())::BIGINT AS launch_gap_ns
-- (the six parts a constant table crossed with the groups, each row's
-- time picked by its position: a LATERAL VALUES of the groups' columns was
-- planned as a join on all six of them)
FROM (SELECT g.*, v.pos, v.part,
             CASE v.pos WHEN 0 THEN g.busy_ns WHEN 1 THEN g.host_bound_ns WHEN 2 THEN g.launch_latency_ns
                        WHEN 3 THEN g.sync_ns WHEN 4 THEN g.graph_internal_ns ELSE g.other_ns END AS part_ns
      FROM _g g
      CROSS JOIN (VALUES (0, 'busy'), (1, 'host_bound'), (2, 'launch_latency'), (3, 'sync'),
                         (4, 'graph_internal'), (5, 'other')) v(pos, part)) g
ORDER BY CASE g.stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                      WHEN 'unknown' THEN 3 ELSE 4 END,
         g.stage, g.scope, g.stream NULLS FIRST, g.pos
