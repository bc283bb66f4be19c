-- compare_decomposition: the parts of one run's step time (compare.md
-- section 2, "where the step-time delta went"), summed over the steps used
-- (edge steps left out unless $keep_edges), per stage:
--   part 'step_time'  summed step time (window_ns)
--   part 'family'     summed kernel time of one family (kernel_names.family
--                     of each raw name; 'unclassified' when unset)
--   part 'overlap'    minus the time kernels overlap each other:
--                     busy_ns - kernel_ns (<= 0)
--   part 'idle'       window_ns - busy_ns: GPU idle inside the steps
-- so, per stage, the 'family', 'overlap' and 'idle' totals add up to the
-- 'step_time' total exactly (kernel - (kernel - busy) + (window - busy)).
-- Divided by steps they are per-step means, and so are their deltas.
--
-- Parameters: $run; $rank (NULL = every rank); $keep_edges; $fresh (true
-- when the run's saved step aggregates are current, steps_fresh.sql: they
-- are read; false computes them, as step_*_cached would).
--
-- Columns: stage, part, family (NULL unless part = 'family'), total_ns,
-- steps (steps used in the stage). Sorted by stage, part, family.
WITH _st AS (
    SELECT t.*
    FROM (SELECT * FROM step_total_store WHERE run_id = $run AND $fresh
          UNION ALL SELECT * FROM step_totals_for($run, skip := $fresh)) t
    JOIN steps s ON s.trace_id = t.trace_id AND s.step = t.step
    WHERE ($rank IS NULL OR t.rank = $rank) AND ($keep_edges OR NOT s.edge)
),
_totals AS (
    SELECT stage, count(*) AS steps, sum(window_ns) AS window_ns, sum(busy_ns) AS busy_ns,
           sum(kernel_ns) AS kernel_ns
    FROM _st
    GROUP BY stage
),
_fam AS (
    SELECT k.stage, coalesce(n.family, 'unclassified') AS family, sum(k.dur_ns) AS ns
    FROM (SELECT * FROM step_kernel_store WHERE run_id = $run AND $fresh
          UNION ALL SELECT * FROM step_kernels_for($run, skip := $fresh)) k
    JOIN steps s ON s.trace_id = k.trace_id AND s.step = k.step
    JOIN kernel_names n ON n.name_id = k.name_id
    WHERE ($rank IS NULL OR k.rank = $rank) AND ($keep_edges OR NOT s.edge)
    GROUP BY ALL
)
SELECT stage, part, family, total_ns::BIGINT AS total_ns, steps
FROM (
    SELECT stage, 'step_time' AS part, NULL AS family, window_ns AS total_ns, steps FROM _totals
    UNION ALL
    SELECT f.stage, 'family', f.family, f.ns, t.steps FROM _fam f JOIN _totals t USING (stage)
    UNION ALL
    SELECT stage, 'overlap', NULL, busy_ns - kernel_ns, steps FROM _totals
    UNION ALL
    SELECT stage, 'idle', NULL, window_ns - busy_ns, steps FROM _totals
)
ORDER BY stage, part, family
