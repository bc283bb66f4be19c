-- launch: what launching costs (issue 37 item 2): how long each GPU event
-- waited after its launch call returned, how long the call held the CPU,
-- and how many events are too short to keep the GPU busy.
--
-- A GPU event has a launch of its own when kernels.launch_id names one and
-- it was not replayed by a graph (a graph's events share the one
-- cudaGraphLaunch, whose delay says nothing about each). For those:
--   launch_ns     the launch call's duration (launches.dur_ns): CPU time
--                 per launch
--   delay_ns      the event's start minus the call's end: how long the
--                 GPU took to start it once the CPU had handed it over;
--                 negative when it started before the call returned.
--                 Holistic Trace Analysis's "launch delay" as its
--                 documentation defines it (its code adds the call's
--                 duration to start minus call start instead)
--   launch_bound  the event ran for less time than its launch call took
--                 (HTA's "short GPU kernels"): the CPU cannot launch such
--                 events as fast as the GPU runs them
-- Every event:
--   short         it ran for less than short_ns (default 10 us)
-- Medians and p90 are interpolated (quantile_cont: an even count's median
-- is the mean of the middle two).


-- _launch_events_for(run, short_ns := 10000): launch_events of run_id run.
CREATE MACRO _launch_events_for(run, short_ns := 10000) AS TABLE
SELECT k.run_id, k.trace_id, k.rank, k.stage, k.step, k.kernel_id, k.name_id, k.ts_ns, k.dur_ns,
       k.graph_launch, l.launch_id, l.name AS launch_name, l.dur_ns AS launch_ns,
       k.ts_ns - (l.ts_ns + l.dur_ns) AS delay_ns,
       k.dur_ns < l.dur_ns AS launch_bound,
       k.dur_ns < short_ns AS short
FROM kernels k
-- (a graph's events match no launch: their key is NULL. `AND NOT
-- k.graph_launch` in the ON clause instead made DuckDB join every kernel
-- with every launch: 40 CPU-s on a 1 M-event run)
LEFT JOIN launches l ON l.launch_id = CASE WHEN k.graph_launch THEN NULL ELSE k.launch_id END
WHERE k.run_id = run;

-- launch_events(run, short_ns := 10000): one row per GPU event of one run
-- (id or label). Columns:
--   run_id, trace_id, rank, stage, step, kernel_id, name_id, ts_ns, dur_ns
--   graph_launch  replayed by a graph (then no launch of its own)
--   launch_id     its own launch (NULL: none, or replayed by a graph)
--   launch_name   the call (cudaLaunchKernel, cudaMemcpyAsync, ...)
--   launch_ns, delay_ns, launch_bound  as above (NULL without a launch)
--   short         dur_ns < short_ns
CREATE MACRO launch_events(run, short_ns := 10000) AS TABLE
SELECT * FROM _launch_events_for(_run_id(run), short_ns := short_ns);

-- launch_kernels(run, rank := NULL, short_ns := 10000): per stage and
-- kernel short name of one run (id or label), over rank `rank` (NULL:
-- every rank), the launch overhead of its GPU events. Columns:
--   stage, short_name
--   events          GPU events
--   launched        those with a launch of their own (the rest: replayed
--                   by a graph, or not correlated)
--   delay_p50_ns, delay_p90_ns, delay_max_ns
--                   launch-to-start delay over the launched events
--   launch_p50_ns, launch_max_ns
--                   the launch call's duration over them
--   launch_bound    launched events shorter than their launch call
--   short           events under short_ns
CREATE MACRO launch_kernels(run, rank := NULL, short_ns := 10000) AS TABLE
SELECT e.stage, n.short_name,
       count(*) AS events,
       count(e.launch_id) AS launched,
       quantile_cont(e.delay_ns, 0.5)::DOUBLE AS delay_p50_ns,
       quantile_cont(e.delay_ns, 0.9)::DOUBLE AS delay_p90_ns,
       max(e.delay_ns)::BIGINT AS delay_max_ns,
       quantile_cont(e.launch_ns, 0.5)::DOUBLE AS launch_p50_ns,
       max(e.launch_ns)::BIGINT AS launch_max_ns,
       count(*) FILTER (WHERE e.launch_bound) AS launch_bound,
       count(*) FILTER (WHERE e.short) AS short
FROM _launch_events_for(_run_id(run), short_ns := short_ns) e
JOIN kernel_names n USING (name_id)
WHERE rank IS NULL OR e.rank = rank
GROUP BY e.stage, n.short_name;

-- launch_stages(run, rank := NULL, short_ns := 10000): per stage of one
-- run (id or label), over rank `rank` (NULL: every rank). Columns:
--   stage, events, launched (as launch_kernels)
--   short, short_pct        events under short_ns, and % of events
--   launch_bound, launch_bound_pct
--                           launched events shorter than their launch
--                           call, and % of the launched events
--   delay_p50_ns, delay_p90_ns, delay_max_ns, launch_p50_ns, launch_max_ns
--                           as launch_kernels, over the stage's events
--   short_ns                the threshold used
CREATE MACRO launch_stages(run, rank := NULL, short_ns := 10000) AS TABLE
SELECT e.stage,
       count(*) AS events,
       count(e.launch_id) AS launched,
       count(*) FILTER (WHERE e.short) AS short,
       100.0 * count(*) FILTER (WHERE e.short) / count(*) AS short_pct,
       count(*) FILTER (WHERE e.launch_bound) AS launch_bound,
       CASE WHEN count(e.launch_id) > 0
            THEN 100.0 * count(*) FILTER (WHERE e.launch_bound) / count(e.launch_id) END AS launch_bound_pct,
       quantile_cont(e.delay_ns, 0.5)::DOUBLE AS delay_p50_ns,
       quantile_cont(e.delay_ns, 0.9)::DOUBLE AS delay_p90_ns,
       max(e.delay_ns)::BIGINT AS delay_max_ns,
       quantile_cont(e.launch_ns, 0.5)::DOUBLE AS launch_p50_ns,
       max(e.launch_ns)::BIGINT AS launch_max_ns,
       short_ns::BIGINT AS short_ns
FROM _launch_events_for(_run_id(run), short_ns := short_ns) e
WHERE rank IS NULL OR e.rank = rank
GROUP BY e.stage;

COMMENT ON MACRO TABLE launch_events IS 'Every GPU event of one run (id or label) with its own launch call: launch_ns (the call''s duration), delay_ns (start minus the call''s end), launch_bound (shorter than its call), short (under short_ns, default 10000).';
COMMENT ON MACRO TABLE launch_kernels IS 'Launch overhead per stage and kernel short name of one run (id or label), rank NULL = every rank: events, launched, launch-to-start delay p50/p90/max, launch call p50/max, launch-bound and short counts.';
COMMENT ON MACRO TABLE launch_stages IS 'Launch overhead per stage of one run (id or label), rank NULL = every rank: short events (under short_ns) and launch-bound events with their shares, delay and launch call figures.';
COMMENT ON MACRO TABLE _launch_events_for IS 'Internal (run_id only): use launch_events.';
