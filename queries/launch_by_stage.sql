-- launch_by_stage: the launch overhead of each stage (sqllib/launch.sql,
-- launch_stages) over the selected rank(s): how many GPU events ran under
-- 10 µs and how many ran shorter than their launch call (launch-bound),
-- with the stage's launch-to-start delay and launch call duration.
--
-- Columns: launch_stages' (stage, events, launched, short, short_pct,
-- launch_bound, launch_bound_pct, delay_p50_ns, delay_p90_ns, delay_max_ns,
-- launch_p50_ns, launch_max_ns, short_ns). Sorted by stage.
--
-- Parameters: $run; $rank (NULL = every rank); $stage (NULL = every stage).
SELECT stage, events, launched, short, short_pct, launch_bound, launch_bound_pct, delay_p50_ns, delay_p90_ns,
       delay_max_ns, launch_p50_ns, launch_max_ns, short_ns
FROM launch_stages($run, rank := $rank)
WHERE $stage IS NULL OR stage = $stage
ORDER BY stage
