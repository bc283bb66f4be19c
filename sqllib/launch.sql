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


-- _launch_events_for(run, short_ns := 10000, skip := false, runs := NULL):
-- launch_events of run_id run (or of every run listed in runs; nothing
-- when skip).
CREATE MACRO _launch_events_for(run, short_ns := 10000, skip := false, runs := NULL) AS TABLE
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
WHERE CASE WHEN runs IS NULL THEN k.run_id = run ELSE _run_in(k.run_id, runs) END AND NOT skip;

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

-- The saved copies (migrations/0023_launch_spread.sql: launch_kernel_store,
-- launch_stage_store) hold the rows of each rank (by_rank below), written
-- by aggregates.SaveSteps with the step aggregates and guarded by the same
-- record (step_store_runs), as the idle rows are. They are read for one
-- rank, and for every rank of a run that has one; other runs' every-rank
-- rows are computed (medians do not add up across ranks).

-- _launch_kernels_for(run, only_rank := NULL, short_ns := 10000,
-- by_rank := false, skip := false, runs := NULL): the definition of
-- launch_kernels, over run_id run (or every run listed in runs; nothing
-- when skip), rank only_rank (NULL: every rank). Columns: run_id, rank
-- (the rank when by_rank, then one row per rank; else NULL), then
-- launch_kernels' columns.
CREATE MACRO _launch_kernels_for(run, only_rank := NULL, short_ns := 10000, by_rank := false, skip := false, runs := NULL) AS TABLE
SELECT e.run_id, CASE WHEN by_rank THEN e.rank END AS rank, e.stage, n.short_name,
       count(*) AS events,
       count(e.launch_id) AS launched,
       quantile_cont(e.delay_ns, 0.5)::DOUBLE AS delay_p50_ns,
       quantile_cont(e.delay_ns, 0.9)::DOUBLE AS delay_p90_ns,
       max(e.delay_ns)::BIGINT AS delay_max_ns,
       quantile_cont(e.launch_ns, 0.5)::DOUBLE AS launch_p50_ns,
       max(e.launch_ns)::BIGINT AS launch_max_ns,
       count(*) FILTER (WHERE e.launch_bound) AS launch_bound,
       count(*) FILTER (WHERE e.short) AS short
FROM _launch_events_for(run, short_ns := short_ns, skip := skip, runs := runs) e
JOIN kernel_names n USING (name_id)
WHERE only_rank IS NULL OR e.rank = only_rank
GROUP BY e.run_id, CASE WHEN by_rank THEN e.rank END, e.stage, n.short_name;

-- _launch_stages_for(run, only_rank := NULL, short_ns := 10000, by_rank :=
-- false, skip := false, runs := NULL): the definition of launch_stages, as
-- _launch_kernels_for. Columns: run_id, rank, then launch_stages' columns.
CREATE MACRO _launch_stages_for(run, only_rank := NULL, short_ns := 10000, by_rank := false, skip := false, runs := NULL) AS TABLE
SELECT e.run_id, CASE WHEN by_rank THEN e.rank END AS rank, e.stage,
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
FROM _launch_events_for(run, short_ns := short_ns, skip := skip, runs := runs) e
WHERE only_rank IS NULL OR e.rank = only_rank
GROUP BY e.run_id, CASE WHEN by_rank THEN e.rank END, e.stage;

-- _launch_saved_given(run, only_rank, short_ns, fresh): _launch_saved of
-- a copy whose freshness is given (fresh not NULL), which a query that
-- knows it names in its place (queries/launch.go): DuckDB binds the check
-- a given fresh skips (_steps_current: 0.7 of the query's 1.1 ms).
CREATE MACRO _launch_saved_given(run, only_rank, short_ns, fresh) AS
    short_ns = 10000 AND getvariable('tracehouse_lake') IS NULL AND fresh
    AND (only_rank IS NOT NULL OR (SELECT count(DISTINCT s.rank) FROM launch_stage_store s WHERE s.run_id = run) = 1);

-- _launch_saved(run, only_rank, short_ns, fresh): whether the saved launch
-- rows answer for run_id run and rank only_rank (NULL: every rank): the
-- copy is current (fresh, or checked when NULL), short_ns is the saved
-- one, a rank is asked for or the run has one rank, and this is not a lake
-- (whose files are written trace by trace: a lake keeps no rows per rank,
-- lake.Local). With fresh and only_rank given it folds to a constant, so
-- that the computing branch of the *_cached macros is dropped (see
-- _idle_steps_cached).
CREATE MACRO _launch_saved(run, only_rank, short_ns, fresh) AS
    _launch_saved_given(run, only_rank, short_ns, CASE WHEN fresh IS NOT NULL THEN fresh ELSE _steps_current(run) END);

-- _launch_kernels_saved(run, only_rank := NULL, short_ns := 10000, fresh
-- := NULL) and _launch_stages_saved(...): the saved rows of run_id run
-- (launch_kernel_store, launch_stage_store) over rank only_rank (NULL:
-- every rank's rows), what the *_cached macros below read when
-- _launch_saved says so. They take the *_cached macros' arguments, so
-- that a query that knows the saved rows apply (queries/launch_saved.sql)
-- names them in place of the *_cached ones (queries/launch.go), and
-- DuckDB does not bind the computing branch (see _idle_steps_saved).
CREATE MACRO _launch_kernels_saved(run, only_rank := NULL, short_ns := 10000, fresh := NULL) AS TABLE
SELECT stage, short_name, events, launched, delay_p50_ns, delay_p90_ns, delay_max_ns, launch_p50_ns,
       launch_max_ns, launch_bound, short
FROM launch_kernel_store
WHERE run_id = run AND (only_rank IS NULL OR rank = only_rank);

CREATE MACRO _launch_stages_saved(run, only_rank := NULL, short_ns := 10000, fresh := NULL) AS TABLE
SELECT s.stage, s.events, s.launched, s.short, s.short_pct, s.launch_bound, s.launch_bound_pct, s.delay_p50_ns,
       s.delay_p90_ns, s.delay_max_ns, s.launch_p50_ns, s.launch_max_ns, s.short_ns
FROM launch_stage_store s
WHERE run_id = run AND (only_rank IS NULL OR rank = only_rank);

-- _launch_kernels_cached(run, only_rank := NULL, short_ns := 10000, fresh
-- := NULL): launch_kernels' rows of run_id run, read from
-- launch_kernel_store when _launch_saved says so, else computed.
CREATE MACRO _launch_kernels_cached(run, only_rank := NULL, short_ns := 10000, fresh := NULL) AS TABLE
WITH _f AS (
    SELECT _launch_saved(run, only_rank, short_ns, NULL) AS saved WHERE fresh IS NULL
)
SELECT * FROM _launch_kernels_saved(run, only_rank := only_rank)
WHERE CASE WHEN fresh IS NOT NULL THEN _launch_saved(run, only_rank, short_ns, fresh) ELSE (SELECT saved FROM _f) END
UNION ALL
SELECT stage, short_name, events, launched, delay_p50_ns, delay_p90_ns, delay_max_ns, launch_p50_ns,
       launch_max_ns, launch_bound, short
FROM _launch_kernels_for(run, only_rank := only_rank, short_ns := short_ns,
    skip := CASE WHEN fresh IS NOT NULL THEN _launch_saved(run, only_rank, short_ns, fresh) ELSE (SELECT saved FROM _f) END);

-- _launch_stages_cached(run, only_rank := NULL, short_ns := 10000, fresh
-- := NULL): launch_stages' rows, as _launch_kernels_cached.
CREATE MACRO _launch_stages_cached(run, only_rank := NULL, short_ns := 10000, fresh := NULL) AS TABLE
WITH _f AS (
    SELECT _launch_saved(run, only_rank, short_ns, NULL) AS saved WHERE fresh IS NULL
)
SELECT * FROM _launch_stages_saved(run, only_rank := only_rank)
WHERE CASE WHEN fresh IS NOT NULL THEN _launch_saved(run, only_rank, short_ns, fresh) ELSE (SELECT saved FROM _f) END
UNION ALL
SELECT c.stage, c.events, c.launched, c.short, c.short_pct, c.launch_bound, c.launch_bound_pct, c.delay_p50_ns,
       c.delay_p90_ns, c.delay_max_ns, c.launch_p50_ns, c.launch_max_ns, c.short_ns
FROM _launch_stages_for(run, only_rank := only_rank, short_ns := short_ns,
    skip := CASE WHEN fresh IS NOT NULL THEN _launch_saved(run, only_rank, short_ns, fresh) ELSE (SELECT saved FROM _f) END) c;

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
SELECT * FROM _launch_kernels_cached(_run_id(run), only_rank := rank, short_ns := short_ns);

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
SELECT * FROM _launch_stages_cached(_run_id(run), only_rank := rank, short_ns := short_ns);

COMMENT ON MACRO TABLE launch_events IS 'Every GPU event of one run (id or label) with its own launch call: launch_ns (the call''s duration), delay_ns (start minus the call''s end), launch_bound (shorter than its call), short (under short_ns, default 10000).';
COMMENT ON MACRO TABLE launch_kernels IS 'Launch overhead per stage and kernel short name of one run (id or label), rank NULL = every rank: events, launched, launch-to-start delay p50/p90/max, launch call p50/max, launch-bound and short counts.';
COMMENT ON MACRO TABLE launch_stages IS 'Launch overhead per stage of one run (id or label), rank NULL = every rank: short events (under short_ns) and launch-bound events with their shares, delay and launch call figures.';
COMMENT ON MACRO TABLE _launch_events_for IS 'Internal (run_id only): use launch_events.';
COMMENT ON MACRO TABLE _launch_kernels_for IS 'Internal (run_id only, always recomputes): use launch_kernels.';
COMMENT ON MACRO TABLE _launch_stages_for IS 'Internal (run_id only, always recomputes): use launch_stages.';
