-- compare_kernel_steps: each kernel's time in each step of one run (the
-- compare kernel table's samples): one row per (stage, rank,
-- trace, step, short name) where the kernel ran; a step where it did not
-- run has no row (its sample is 0). Edge steps are left out unless
-- $keep_edges. Sorted by stage, short name, rank, trace, step.
--
-- Parameters: $run; $rank (NULL = every rank); $keep_edges; $fresh (true
-- when the run's saved step aggregates are current, steps_fresh.sql: they
-- are read; false computes them, as step_*_cached would).
--
-- Columns:
--   stage, short_name, rank, trace_id, step
--   ns         summed dur_ns of the kernel's events in the step
--   launches   its events in the step
SELECT k.stage, n.short_name, k.rank, k.trace_id, k.step,
       sum(k.dur_ns)::BIGINT AS ns, sum(k.launches)::BIGINT AS launches
FROM (SELECT * FROM step_kernel_store WHERE run_id = $run AND $fresh
          UNION ALL SELECT * FROM step_kernels_for($run, skip := $fresh)) k
JOIN steps s ON s.trace_id = k.trace_id AND s.step = k.step
JOIN kernel_names n ON n.name_id = k.name_id
WHERE ($rank IS NULL OR k.rank = $rank) AND ($keep_edges OR NOT s.edge)
GROUP BY k.stage, n.short_name, k.rank, k.trace_id, k.step
ORDER BY k.stage, n.short_name, k.rank, k.trace_id, k.step
