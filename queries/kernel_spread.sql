-- kernel_spread: each kernel's duration spread (sqllib/spread.sql,
-- kernel_spread) per (stage, short name) over the selected rank(s): the
-- keys of kernel_table.sql's rows.
--
-- Columns: kernel_spread's (stage, short_name, events, min_ns, p50_ns,
-- p90_ns, max_ns, stddev_ns). Sorted by stage, short name.
--
-- Parameters: $run; $rank (NULL = every rank); $stage (NULL = every
-- stage); $fresh (true when the run's copies saved with its step
-- aggregates are current, idle_fresh.sql; NULL = checked here).
SELECT stage, short_name, events, min_ns, p50_ns, p90_ns, max_ns, stddev_ns
FROM _kernel_spread_cached($run, only_rank := $rank, fresh := $fresh)
WHERE $stage IS NULL OR stage = $stage
ORDER BY stage, short_name
