-- launch_by_stage: the launch overhead of each stage (sqllib/launch.sql,
-- launch_stages) over the selected rank(s): how many GPU events ran under
-- 10 µs and how many ran shorter than their launch call (launch-bound),
-- with the stage's launch-to-start delay and launch call duration.
--
-- Columns: launch_stages' (stage, events, launched, short, short_pct,
-- launch_bound, launch_bound_pct, delay_p50_ns, delay_p90_ns, delay_max_ns,
-- launch_p50_ns, launch_max_ns, short_ns). Sorted by stage.
--
-- Parameters: $run; $rank (NULL = every rank); $stage (NULL = every
-- stage); $fresh (true when the run's copies saved with its step
-- aggregates are current, idle_fresh.sql; NULL = checked here).
SELECT stage, events, launched, short, short_pct, launch_bound, launch_bound_pct, delay_p50_ns, delay_p90_ns,
       delay_max_ns, launch_p50_ns, launch_max_ns, short_ns
FROM _launch_stages_cached($run, only_rank := $rank, fresh := $fresh)
WHERE $stage IS NULL OR stage = $stage
ORDER BY stage
