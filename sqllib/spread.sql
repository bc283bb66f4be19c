-- spread: how much one kernel's instances differ (issue 37 item 3), so an
-- outlier instance shows without opening a timeline.
--
-- Medians and p90 interpolate between the two nearest instances
-- (quantile_cont: an even count's median is the mean of the middle two);
-- the standard deviation is the sample one (n - 1), NULL for one instance,
-- computed from exact integer sums so that it is the same on every scan.


-- _kernel_spread_for(run, only_rank := NULL, by_rank := false, skip :=
-- false, runs := NULL): the definition of kernel_spread, over run_id run
-- (or every run listed in runs; nothing when skip), rank only_rank (NULL:
-- every rank). Columns: run_id, rank (the rank when by_rank, then one row
-- per rank; else NULL), then kernel_spread's columns. Its saved copy
-- (migrations/0023_launch_spread.sql: kernel_spread_store, the rows of
-- each rank) is saved and read as the launch rows are (sqllib/launch.sql).
CREATE MACRO _kernel_spread_for(run, only_rank := NULL, by_rank := false, skip := false, runs := NULL) AS TABLE
SELECT k.run_id, CASE WHEN by_rank THEN k.rank END AS rank, k.stage, n.short_name,
       count(*) AS events,
       min(k.dur_ns)::BIGINT AS min_ns,
       quantile_cont(k.dur_ns, 0.5)::DOUBLE AS p50_ns,
       quantile_cont(k.dur_ns, 0.9)::DOUBLE AS p90_ns,
       max(k.dur_ns)::BIGINT AS max_ns,
       -- from exact integer sums: a parallel stddev_samp adds its parts in
       -- any order, and the last bits of the result would vary
       CASE WHEN count(*) > 1
            THEN sqrt((count(*) * sum(k.dur_ns::HUGEINT * k.dur_ns) - sum(k.dur_ns::HUGEINT) * sum(k.dur_ns::HUGEINT))::DOUBLE
                      / (count(*) * (count(*) - 1)))
       END AS stddev_ns
FROM kernels k
JOIN kernel_names n USING (name_id)
WHERE CASE WHEN runs IS NULL THEN k.run_id = run ELSE _run_in(k.run_id, runs) END AND NOT skip
  AND (only_rank IS NULL OR k.rank = only_rank)
GROUP BY k.run_id, CASE WHEN by_rank THEN k.rank END, k.stage, n.short_name;

-- _kernel_spread_saved(run, only_rank := NULL, fresh := NULL): the saved
-- rows of run_id run (kernel_spread_store) over rank only_rank (NULL:
-- every rank's rows), what _kernel_spread_cached reads when _launch_saved
-- says so; its arguments, for a query that knows (see
-- _launch_kernels_saved).
CREATE MACRO _kernel_spread_saved(run, only_rank := NULL, fresh := NULL) AS TABLE
SELECT stage, short_name, events, min_ns, p50_ns, p90_ns, max_ns, stddev_ns
FROM kernel_spread_store
WHERE run_id = run AND (only_rank IS NULL OR rank = only_rank);

-- _kernel_spread_cached(run, only_rank := NULL, fresh := NULL):
-- kernel_spread's rows of run_id run, read from kernel_spread_store when
-- _launch_saved says so, else computed.
CREATE MACRO _kernel_spread_cached(run, only_rank := NULL, fresh := NULL) AS TABLE
WITH _f AS (
    SELECT _launch_saved(run, only_rank, 10000, NULL) AS saved WHERE fresh IS NULL
)
SELECT * FROM _kernel_spread_saved(run, only_rank := only_rank)
WHERE CASE WHEN fresh IS NOT NULL THEN _launch_saved(run, only_rank, 10000, fresh) ELSE (SELECT saved FROM _f) END
UNION ALL
SELECT stage, short_name, events, min_ns, p50_ns, p90_ns, max_ns, stddev_ns
FROM _kernel_spread_for(run, only_rank := only_rank,
    skip := CASE WHEN fresh IS NOT NULL THEN _launch_saved(run, only_rank, 10000, fresh) ELSE (SELECT saved FROM _f) END);

-- kernel_spread(run, rank := NULL): per stage and kernel short name of one
-- run (id or label), over rank `rank` (NULL: every rank), the duration of
-- its GPU events. Columns:
--   stage, short_name, events
--   min_ns, p50_ns, p90_ns, max_ns   dur_ns's minimum, median, p90, maximum
--   stddev_ns                        its sample standard deviation
CREATE MACRO kernel_spread(run, rank := NULL) AS TABLE
SELECT * FROM _kernel_spread_cached(_run_id(run), only_rank := rank);

COMMENT ON MACRO TABLE kernel_spread IS 'Duration spread per stage and kernel short name of one run (id or label), rank NULL = every rank: events, min, median, p90, max and sample standard deviation of dur_ns.';
COMMENT ON MACRO TABLE _kernel_spread_for IS 'Internal (run_id only, always recomputes): use kernel_spread.';
