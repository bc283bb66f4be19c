-- history_steps: the per-step samples of one `tracehouse history` series
-- (README "History: when did it get slow") for each run of $fresh_runs, read from their saved
-- step aggregates, and for run $run, computed from its kernels (a run whose
-- saved copy is not current; one at a time: the step_*_for macros take one
-- run): one row per (run, stage, trace, step) of rank $rank, edge steps
-- left out unless $keep_edges.
-- The series is either a step metric ($metric: 'step_time' = the step's GPU
-- window, 'busy' = GPU busy time, 'exposed_comm' = communication not hidden
-- under compute, 'idle' = step time minus busy time, 'idle_host_bound',
-- 'idle_launch_latency', 'idle_sync', 'idle_graph_internal', 'idle_other' =
-- the idle time of that cause, sqllib/idle.sql, summed over the step's
-- devices) or the summed time of the kernels whose short name
-- matches the RE2 pattern $pattern and (or) whose family is $family
-- ('unclassified' for names without one); a step where no such kernel ran
-- has value 0. Sorted by run_id, stage, trace, step.
--
-- Parameters: $fresh_runs (a list of run_id whose saved step aggregates
-- are current, steps_fresh.sql); $run (a run_id to compute, NULL = none);
-- $stage (NULL = every stage); $rank; $keep_edges; $metric (NULL for a
-- kernel series); $pattern and $family (NULL = no filter; read only when
-- $metric is NULL).
--
-- Columns:
--   run_id, stage, trace_id, step
--   value_ns           the step's value
--   launches           GPU events in the step: every event for a metric,
--                      the matching ones for a kernel series
--   steps              the run's steps in the stage (on every row of it)
--   launches_per_step  summed launches / steps over the run's steps in the
--                      stage
--   share_pct          100 x summed value_ns / the summed denominator over
--                      the run's steps in the stage: the step time for a
--                      metric, the summed kernel time (every event, each
--                      counted) for a kernel series; NULL when that is 0
WITH _t AS (
    SELECT * FROM step_total_store WHERE list_contains($fresh_runs::BIGINT[], run_id::BIGINT)
    UNION ALL
    SELECT * FROM step_totals_for($run, skip := $run IS NULL)
),
_i AS (
    -- read (or computed) only for an idle cause
    SELECT * FROM _idle_step_causes(CASE WHEN starts_with($metric, 'idle_') THEN $fresh_runs::BIGINT[] ELSE []::BIGINT[] END,
                                    CASE WHEN starts_with($metric, 'idle_') THEN $run END)
),
_st AS (
    SELECT t.run_id, t.stage, t.rank, t.trace_id, t.step, t.kernels, t.kernel_ns, t.window_ns,
           CASE $metric WHEN 'step_time' THEN t.window_ns
                        WHEN 'busy' THEN t.busy_ns
                        WHEN 'exposed_comm' THEN t.exposed_comm_ns
                        WHEN 'idle' THEN t.window_ns - t.busy_ns
                        WHEN 'idle_host_bound' THEN coalesce(i.host_bound_ns, 0)
                        WHEN 'idle_launch_latency' THEN coalesce(i.launch_latency_ns, 0)
                        WHEN 'idle_sync' THEN coalesce(i.sync_ns, 0)
                        WHEN 'idle_graph_internal' THEN coalesce(i.graph_internal_ns, 0)
                        WHEN 'idle_other' THEN coalesce(i.other_ns, 0) END AS metric_ns
    FROM _t t
    JOIN steps s ON s.trace_id = t.trace_id AND s.step = t.step
    LEFT JOIN _i i ON i.run_id = t.run_id AND i.trace_id = t.trace_id AND i.rank = t.rank AND i.stage = t.stage
                  AND i.step = t.step
    WHERE t.rank = $rank AND ($stage IS NULL OR t.stage = $stage) AND ($keep_edges OR NOT s.edge)
),
_k AS (
    SELECT * FROM step_kernel_store
    WHERE $metric IS NULL AND list_contains($fresh_runs::BIGINT[], run_id::BIGINT)
    UNION ALL
    SELECT * FROM step_kernels_for($run, skip := $run IS NULL OR $metric IS NOT NULL)
),
_m AS (
    SELECT k.trace_id, k.rank, k.stage, k.step, sum(k.dur_ns) AS ns, sum(k.launches) AS launches
    FROM _k k
    JOIN kernel_names n USING (name_id)
    WHERE k.rank = $rank AND ($stage IS NULL OR k.stage = $stage)
      AND ($pattern IS NULL OR regexp_matches(n.short_name, $pattern))
      AND ($family IS NULL OR coalesce(n.family, 'unclassified') = $family)
    GROUP BY k.trace_id, k.rank, k.stage, k.step
),
_v AS (
    SELECT st.run_id, st.stage, st.trace_id, st.step,
           CASE WHEN $metric IS NULL THEN coalesce(m.ns, 0) ELSE st.metric_ns END::BIGINT AS value_ns,
           CASE WHEN $metric IS NULL THEN coalesce(m.launches, 0) ELSE st.kernels END::BIGINT AS launches,
           CASE WHEN $metric IS NULL THEN st.kernel_ns ELSE st.window_ns END AS denom_ns
    FROM _st st
    LEFT JOIN _m m ON m.trace_id = st.trace_id AND m.rank = st.rank AND m.stage = st.stage AND m.step = st.step
)
SELECT run_id, stage, trace_id, step, value_ns, launches,
       count(*) OVER w AS steps,
       sum(launches) OVER w / count(*) OVER w AS launches_per_step,
       100 * sum(value_ns) OVER w / nullif(sum(denom_ns) OVER w, 0) AS share_pct
FROM _v
WINDOW w AS (PARTITION BY run_id, stage)
ORDER BY run_id, stage, trace_id, step
