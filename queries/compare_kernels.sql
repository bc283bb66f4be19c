-- compare_kernels: one run's kernel rows for the compare kernel table
-- (README "Comparing runs"), over the steps used (edge steps left out unless
-- $keep_edges): one row per (stage, short name). Sorted by stage, short
-- name.
--
-- Parameters: $run; $rank (NULL = every rank); $keep_edges; $fresh (true
-- when the run's saved step aggregates are current, steps_fresh.sql: they
-- are read; false computes them, as step_*_cached would).
--
-- Columns:
--   stage, short_name
--   family, category   those of the raw name with the most time among the
--                      raw names sharing the short name, ties by the raw
--                      name (kernel_table.sql's rule)
--   ns                 summed dur_ns over the steps used
--   launches           events over the steps used
--   stage_ns           summed dur_ns of every event of the stage over the
--                      steps used: the share's denominator
--   hidden_ns          summed kernel_overlap hidden_ns (under another stream)
--   hidden_by_compute_ns  the part hidden under compute
--   site               display form of the Python site with the most GPU
--                      time among the run's events of that name and stage
--                      (same ranks, every step), ties by the site's text
--                      (sites.name, not site_id); NULL when
--                      none has a site (CUDA-graph replays)
WITH _k AS (
    SELECT k.stage, k.name_id, sum(k.dur_ns) AS ns, sum(k.launches) AS launches,
           sum(k.hidden_ns) AS hidden_ns, sum(k.hidden_by_compute_ns) AS hidden_by_compute_ns
    FROM (SELECT * FROM step_kernel_store WHERE run_id = $run AND $fresh
          UNION ALL SELECT * FROM step_kernels_for($run, skip := $fresh)) k
    JOIN steps s ON s.trace_id = k.trace_id AND s.step = k.step
    WHERE ($rank IS NULL OR k.rank = $rank) AND ($keep_edges OR NOT s.edge)
    GROUP BY k.stage, k.name_id
),
_named AS (
    SELECT k.*, n.name, n.short_name, n.family, n.category
    FROM _k k
    JOIN kernel_names n USING (name_id)
),
_site_time AS (
    SELECT k.stage, n.short_name, k.site_id, sum(k.dur_ns) AS ns
    FROM kernels k
    JOIN kernel_names n USING (name_id)
    WHERE k.run_id = $run AND ($rank IS NULL OR k.rank = $rank) AND k.site_id IS NOT NULL
    GROUP BY k.stage, n.short_name, k.site_id
),
_site AS (
    SELECT t.stage, t.short_name, first(s.display ORDER BY t.ns DESC, s.name) AS site
    FROM _site_time t
    JOIN sites s USING (site_id)
    GROUP BY t.stage, t.short_name
)
SELECT n.stage, n.short_name,
       coalesce(first(n.family ORDER BY n.ns DESC, n.name), 'unclassified') AS family,
       coalesce(first(n.category ORDER BY n.ns DESC, n.name), 'unclassified') AS category,
       sum(n.ns)::BIGINT AS ns,
       sum(n.launches)::BIGINT AS launches,
       any_value(t.stage_ns)::BIGINT AS stage_ns,
       sum(n.hidden_ns)::BIGINT AS hidden_ns,
       sum(n.hidden_by_compute_ns)::BIGINT AS hidden_by_compute_ns,
       any_value(s.site) AS site
FROM _named n
JOIN (SELECT stage, sum(ns) AS stage_ns FROM _k GROUP BY stage) t USING (stage)
LEFT JOIN _site s ON s.stage = n.stage AND s.short_name = n.short_name
GROUP BY n.stage, n.short_name
ORDER BY n.stage, n.short_name
