-- spread: how much one kernel's instances differ (issue 37 item 3), so an
-- outlier instance shows without opening a timeline.
--
-- Medians and p90 interpolate between the two nearest instances
-- (quantile_cont: an even count's median is the mean of the middle two);
-- the standard deviation is the sample one (n - 1), NULL for one instance,
-- computed from exact integer sums so that it is the same on every scan.


-- kernel_spread(run, rank := NULL): per stage and kernel short name of one
-- run (id or label), over rank `rank` (NULL: every rank), the duration of
-- its GPU events. Columns:
--   stage, short_name, events
--   min_ns, p50_ns, p90_ns, max_ns   dur_ns's minimum, median, p90, maximum
--   stddev_ns                        its sample standard deviation
CREATE MACRO kernel_spread(run, rank := NULL) AS TABLE
SELECT k.stage, n.short_name,
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
WHERE k.run_id = _run_id(run) AND (rank IS NULL OR k.rank = rank)
GROUP BY k.stage, n.short_name;

COMMENT ON MACRO TABLE kernel_spread IS 'Duration spread per stage and kernel short name of one run (id or label), rank NULL = every rank: events, min, median, p90, max and sample standard deviation of dur_ns.';
