-- launch_by_kernel: the launch overhead of each kernel of a stage
-- (sqllib/launch.sql, launch_kernels): launch-to-start delay, launch call
-- duration, launch-bound and short events, per (stage, short name) over
-- the selected rank(s): the keys of kernel_table.sql's rows.
--
-- Columns: launch_kernels' (stage, short_name, events, launched,
-- delay_p50_ns, delay_p90_ns, delay_max_ns, launch_p50_ns, launch_max_ns,
-- launch_bound, short). Sorted by stage, short name.
--
-- Parameters: $run; $rank (NULL = every rank); $stage (NULL = every
-- stage); $fresh (true when the run's copies saved with its step
-- aggregates are current, idle_fresh.sql; NULL = checked here).
SELECT stage, short_name, events, launched, delay_p50_ns, delay_p90_ns, delay_max_ns, launch_p50_ns, launch_max_ns,
       launch_bound, short
FROM _launch_kernels_cached($run, only_rank := $rank, fresh := $fresh)
WHERE $stage IS NULL OR stage = $stage
ORDER BY stage, short_name
