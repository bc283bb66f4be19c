-- history_steps: the per-step samples of one `tracehouse history` series
-- (compare.md section 6) for each run of $runs: one row per (run, stage,
-- trace, step) of rank $rank, edge steps left out unless $keep_edges.
-- The series is either a step metric ($metric: 'step_time' = the step's GPU
-- window, 'busy' = GPU busy time, 'exposed_comm' = communication not hidden
-- under compute) or the summed time of the kernels whose short name
-- matches the RE2 pattern $pattern and (or) whose family is $family
-- ('unclassified' for names without one); a step where no such kernel ran
-- has value 0. Sorted by run_id, stage, trace, step.
--
-- Parameters: $runs (a list of run_id); $fresh_runs (those of $runs whose
-- saved step aggregates are current, steps_fresh.sql: read from the
-- stores; the others are computed, as step_*_cached would); $stage (NULL =
-- every stage); $rank; $keep_edges; $metric (NULL for a kernel series);
-- $pattern and $family (NULL = no filter; read only when $metric is NULL).
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
WITH _runs AS (
    SELECT run_id, list_contains($fresh_runs::BIGINT[], run_id::BIGINT) AS fresh
    FROM (SELECT DISTINCT unnest($runs::BIGINT[])::INTEGER AS run_id)
),
_t AS (
    SELECT t.* FROM step_total_store t WHERE t.run_id IN (SELECT run_id FROM _runs WHERE fresh)
    UNION ALL
    SELECT t.* FROM (SELECT run_id FROM _runs WHERE NOT fresh) r, LATERAL step_totals_for(r.run_id) t
),
_st AS (
    SELECT t.run_id, t.stage, t.rank, t.trace_id, t.step, t.kernels, t.kernel_ns, t.window_ns,
           CASE $metric WHEN 'step_time' THEN t.window_ns
                        WHEN 'busy' THEN t.busy_ns
                        WHEN 'exposed_comm' THEN t.exposed_comm_ns END AS metric_ns
    FROM _t t
    JOIN steps s ON s.trace_id = t.trace_id AND s.step = t.step
    WHERE t.rank = $rank AND ($stage IS NULL OR t.stage = $stage) AND ($keep_edges OR NOT s.edge)
),
_k AS (
    SELECT k.* FROM step_kernel_store k
    WHERE $metric IS NULL AND k.run_id IN (SELECT run_id FROM _runs WHERE fresh)
    UNION ALL
    SELECT k.* FROM (SELECT run_id FROM _runs WHERE NOT fresh AND $metric IS NULL) r, LATERAL step_kernels_for(r.run_id) k
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
