-- idle_by_step: where the GPU waits (sqllib/idle.sql), per stage and step:
-- each step's time on its device(s) (scope 'device', summed over the
-- rank's devices) split into busy time and idle time by cause, for the
-- first $n (step, rank) pairs of each stage in step order, edge steps
-- (steps.edge) left out: the HTML report's bar per step.
--
-- One row per (stage, rank, step, part), part in busy, host_bound,
-- launch_latency, sync, graph_internal, other: per (stage, rank, step) the
-- six add up to window_ns exactly.
-- Columns:
--   stage, rank, step
--   stage_steps  the stage's (step, rank) pairs in all (of which at most
--                $n are here)
--   window_ns    the step's time (last end minus first start, per device)
--   part, ns     the part and its time
--   share_pct    100 * ns / window_ns (NULL when the window is 0)
-- Sorted by stage (prefill, decode, mixed, unknown, others by name), step,
-- rank, then part in the order above.
--
-- Parameters: $run; $rank (NULL = every rank); $stage (NULL = every
-- stage); $n; $launch_gap_ns (NULL = the saved rows' 30 us); $fresh (as
-- idle_by_stage.sql).
WITH _i AS (
    SELECT i.stage, i.rank, i.step, sum(i.window_ns) AS window_ns, sum(i.busy_ns) AS busy_ns,
           sum(i.host_bound_ns) AS host_bound_ns, sum(i.launch_latency_ns) AS launch_latency_ns,
           sum(i.sync_ns) AS sync_ns, sum(i.graph_internal_ns) AS graph_internal_ns, sum(i.other_ns) AS other_ns
    FROM _idle_steps_cached($run, launch_gap_ns := coalesce($launch_gap_ns, _idle_default_gap()), fresh := $fresh) i
    JOIN steps s ON s.trace_id = i.trace_id AND s.step = i.step
    WHERE i.scope = 'device' AND ($rank IS NULL OR i.rank = $rank) AND ($stage IS NULL OR i.stage = $stage) AND NOT s.edge
    GROUP BY i.stage, i.rank, i.step
),
_n AS (
    SELECT *, count(*) OVER (PARTITION BY stage) AS stage_steps
    FROM _i
    QUALIFY row_number() OVER (PARTITION BY stage ORDER BY step, rank) <= $n
)
SELECT g.stage, g.rank, g.step, g.stage_steps, g.window_ns::BIGINT AS window_ns,
       g.part, g.part_ns::BIGINT AS ns,
       CASE WHEN g.window_ns > 0 THEN 100.0 * g.part_ns / g.window_ns END AS share_pct
-- (the six parts a constant table crossed with the groups, each row's
-- time picked by its position: a LATERAL VALUES of the groups' columns was
-- planned as a join on all six of them)
FROM (SELECT g.*, v.pos, v.part,
             CASE v.pos WHEN 0 THEN g.busy_ns WHEN 1 THEN g.host_bound_ns WHEN 2 THEN g.launch_latency_ns
                        WHEN 3 THEN g.sync_ns WHEN 4 THEN g.graph_internal_ns ELSE g.other_ns END AS part_ns
      FROM _n g
      CROSS JOIN (VALUES (0, 'busy'), (1, 'host_bound'), (2, 'launch_latency'), (3, 'sync'),
                         (4, 'graph_internal'), (5, 'other')) v(pos, part)) g
ORDER BY CASE g.stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                      WHEN 'unknown' THEN 3 ELSE 4 END,
         g.stage, g.step, g.rank, g.pos
