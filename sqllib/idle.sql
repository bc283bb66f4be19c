-- idle: where the GPU waits (issue 37). Every gap in a step's GPU activity
-- gets one cause, so a step's busy time plus its idle time by cause is its
-- step time exactly. migrations/0020_idle.sql holds the saved copies
-- (idle_step_store, idle_gap_store), written by aggregates.SaveSteps with the
-- step aggregates and guarded by the same record (step_store_runs): they
-- are current exactly when the steps' copy is (_steps_current, steps module).
--
-- Gaps are taken per step (kernels.step), in two scopes:
--   device  the union of the device's streams: a gap is an instant inside
--           the step's window on that device (first start .. last end) when
--           no event of the step runs on it;
--   stream  one stream alone: the time between one event's end (the latest
--           end so far on the stream) and the next event's start.
-- The event that ends a gap is "next"; the event whose end began it (the
-- latest end before it; ties by the higher kernel_id) is "prev". Each gap
-- takes the first cause that holds:
--   graph_internal  next and prev were replayed by the same graph launch
--                   (a CUDA/HIP graph's kernels have no launch of their own);
--   sync            a blocking runtime call (_idle_blocking: cuda/hip
--                   Stream/Device/Event Synchronize, a blocking memcpy) on
--                   the thread that launched next began before that launch
--                   and ended after the gap began: the CPU waited for the
--                   GPU, then launched;
--   host_bound      next's launch call began after the gap began: the GPU
--                   waited for the CPU;
--   launch_latency  next was launched before the gap began and the gap is
--                   shorter than launch_gap_ns (default 30 us, the default
--                   threshold of Holistic Trace Analysis's idle-time
--                   breakdown, whose times are the trace's microseconds);
--   other           anything else, including a next event with no launch.
-- Steps are read as stored: events outside every step are in no gap, and
-- the time between steps is nobody's idle time.


-- _idle_blocking(name): the runtime or driver call `name` blocks its thread
-- until the GPU reaches some point.
CREATE MACRO _idle_blocking(name) AS
    regexp_full_match(name, '(cuda|hip)(StreamSynchronize|DeviceSynchronize|EventSynchronize|ThreadSynchronize|Memcpy|Memcpy2D|Memcpy3D|MemcpyPeer|MemcpyFromSymbol|MemcpyToSymbol|MemcpyDtoH|MemcpyHtoD|MemcpyDtoD)')
    OR regexp_full_match(name, 'cu(StreamSynchronize|CtxSynchronize|EventSynchronize|Memcpy|MemcpyDtoH|MemcpyHtoD|MemcpyDtoD)(_v2)?');

-- _idle_gaps_for(run, launch_gap_ns := 30000, skip := false, runs := NULL):
-- one row per gap of run `run` (or of every run listed in runs), in both
-- scopes (nothing when skip). Columns:
--   run_id, trace_id, rank, stage, step, device
--   scope            'device' or 'stream'
--   stream           the stream (scope 'stream'); NULL for 'device'
--   kernel_id        next: the event the gap ends at
--   prev_kernel_id   prev: the event whose end began it
--   gap_start_ns     prev's end; gap_ns: next's start minus it (> 0)
--   cause            graph_internal | sync | host_bound | launch_latency | other
--   launch_id        next's launch (NULL when it has none)
--   launch_ts_ns     its start
CREATE MACRO _idle_gaps_for(run, launch_gap_ns := 30000, skip := false, runs := NULL) AS TABLE
WITH _k AS (
    SELECT k.run_id, k.trace_id, k.rank, k.stage, k.step, k.device, k.stream, k.kernel_id,
           k.ts_ns, k.ts_ns + k.dur_ns AS end_ns, k.graph_launch, k.launch_id
    FROM kernels k
    WHERE CASE WHEN runs IS NULL THEN k.run_id = run ELSE _run_in(k.run_id, runs) END
      AND k.step IS NOT NULL AND NOT skip
),
_sorted AS (
    -- Both scopes in one sort, each group contiguous: streaming windows
    -- over it cost about two thirds of one partitioned window.
    SELECT *, (trace_id, rank, stage, step, device, scope, scope_stream) AS grp
    FROM (SELECT *, 'device' AS scope, NULL::BIGINT AS scope_stream FROM _k
          UNION ALL
          SELECT *, 'stream', stream FROM _k)
    ORDER BY trace_id, rank, stage, step, device, scope, scope_stream, ts_ns, kernel_id
),
_first AS (
    SELECT *, lag(grp) OVER () IS DISTINCT FROM grp AS first FROM _sorted
),
_ordinal AS (
    SELECT *, sum(first::INTEGER) OVER (ROWS UNBOUNDED PRECEDING) AS grp_ordinal FROM _first
),
_running AS (
    -- the latest end so far, and (low 32 bits) the ordinal of the event
    -- that ends then (kernel_id = trace_id * 2^32 + ordinal, ties to the
    -- higher); the group's ordinal above both, so a running max never
    -- reaches back into the group before
    SELECT *,
           max((grp_ordinal::HUGEINT << 96) + end_ns::HUGEINT * 4294967296 + (kernel_id & 4294967295))
               OVER (ROWS UNBOUNDED PRECEDING) AS running
    FROM _ordinal
),
_prior AS (
    SELECT *, CASE WHEN NOT first THEN (lag(running) OVER ()) & ((1::HUGEINT << 96) - 1) END AS prior
    FROM _running
),
_g AS (
    SELECT run_id, trace_id, rank, stage, step, device, scope, scope_stream AS stream, kernel_id,
           (trace_id::BIGINT << 32) + (prior & 4294967295)::BIGINT AS prev_kernel_id,
           (prior >> 32)::BIGINT AS gap_start_ns,
           ts_ns - (prior >> 32)::BIGINT AS gap_ns,
           graph_launch, launch_id
    FROM _prior
    WHERE (prior >> 32) < ts_ns
),
_replayed AS (
    SELECT k.kernel_id, k.launch_id
    FROM kernels k
    WHERE CASE WHEN runs IS NULL THEN k.run_id = run ELSE _run_in(k.run_id, runs) END
      AND k.graph_launch AND NOT skip
),
_l AS (
    SELECT g.*, l.ts_ns AS launch_ts_ns, l.pid, l.tid, p.launch_id AS prev_replay_id
    FROM _g g
    LEFT JOIN launches l ON l.launch_id = g.launch_id
    LEFT JOIN _replayed p ON p.kernel_id = g.prev_kernel_id
),
_blocking AS (
    SELECT l.trace_id, l.pid, l.tid, l.ts_ns, l.ts_ns + l.dur_ns AS end_ns
    FROM launches l
    WHERE l.trace_id IN (SELECT trace_id FROM traces
                         WHERE CASE WHEN runs IS NULL THEN run_id = run ELSE _run_in(run_id, runs) END)
      AND _idle_blocking(l.name) AND NOT skip
),
_s AS (
    -- Only a launch that began after the gap began can follow a blocking
    -- call that ended after it; calls on one thread do not overlap, so
    -- only the last blocking call that began at or before the launch can
    -- reach into the gap.
    SELECT g.*, b.end_ns AS blocking_end_ns
    FROM (SELECT * FROM _l WHERE launch_ts_ns > gap_start_ns) g
    ASOF LEFT JOIN _blocking b
      ON b.trace_id = g.trace_id AND b.pid = g.pid AND b.tid = g.tid AND g.launch_ts_ns >= b.ts_ns
    UNION ALL
    SELECT *, NULL::BIGINT FROM _l WHERE launch_ts_ns IS NULL OR launch_ts_ns <= gap_start_ns
)
SELECT run_id, trace_id, rank, stage, step, device, scope, stream, kernel_id, prev_kernel_id,
       gap_start_ns, gap_ns,
       CASE WHEN graph_launch AND launch_id = prev_replay_id THEN 'graph_internal'
            WHEN blocking_end_ns > gap_start_ns THEN 'sync'
            WHEN launch_ts_ns > gap_start_ns THEN 'host_bound'
            WHEN launch_ts_ns IS NOT NULL AND gap_ns < launch_gap_ns THEN 'launch_latency'
            ELSE 'other'
       END AS cause,
       launch_id, launch_ts_ns
FROM _s;

-- _idle_default_gap(): the launch_gap_ns the saved rows are computed with.
CREATE MACRO _idle_default_gap() AS 30000;

-- _idle_steps_for(run, launch_gap_ns := 30000, skip := false, runs := NULL):
-- one row per (trace, rank, stage, step, device) in scope 'device' and per
-- (..., stream) in scope 'stream' of run `run` (or of the runs listed;
-- nothing when skip). Columns:
--   run_id, trace_id, rank, stage, step, device, scope, stream (NULL for 'device')
--   events          GPU events
--   first_ns, last_end_ns  first start, last end; window_ns their difference
--                   (scope 'device': the step time on that device)
--   busy_ns         the union of the events' intervals
--   idle_ns         window_ns - busy_ns: the gaps' sum
--   gaps            gaps
--   host_bound_ns, launch_latency_ns, sync_ns, graph_internal_ns, other_ns
--                   the gaps' sum by cause: they add up to idle_ns, so busy_ns
--                   plus the five is window_ns exactly
CREATE MACRO _idle_steps_for(run, launch_gap_ns := 30000, skip := false, runs := NULL) AS TABLE
WITH _k AS (
    SELECT k.run_id, k.trace_id, k.rank, k.stage, k.step, k.device, k.stream,
           k.ts_ns, k.ts_ns + k.dur_ns AS end_ns
    FROM kernels k
    WHERE CASE WHEN runs IS NULL THEN k.run_id = run ELSE _run_in(k.run_id, runs) END
      AND k.step IS NOT NULL AND NOT skip
),
_win AS (
    SELECT run_id, trace_id, rank, stage, step, device, 'device' AS scope, NULL::BIGINT AS stream,
           count(*) AS events, min(ts_ns) AS first_ns, max(end_ns) AS last_end_ns
    FROM _k
    GROUP BY run_id, trace_id, rank, stage, step, device
    UNION ALL
    SELECT run_id, trace_id, rank, stage, step, device, 'stream', stream,
           count(*), min(ts_ns), max(end_ns)
    FROM _k
    GROUP BY run_id, trace_id, rank, stage, step, device, stream
),
_c AS (
    SELECT run_id, trace_id, rank, stage, step, device, scope, stream,
           count(*) AS gaps,
           sum(gap_ns) AS idle_ns,
           coalesce(sum(gap_ns) FILTER (WHERE cause = 'host_bound'), 0) AS host_bound_ns,
           coalesce(sum(gap_ns) FILTER (WHERE cause = 'launch_latency'), 0) AS launch_latency_ns,
           coalesce(sum(gap_ns) FILTER (WHERE cause = 'sync'), 0) AS sync_ns,
           coalesce(sum(gap_ns) FILTER (WHERE cause = 'graph_internal'), 0) AS graph_internal_ns,
           coalesce(sum(gap_ns) FILTER (WHERE cause = 'other'), 0) AS other_ns
    FROM _idle_gaps_for(run, launch_gap_ns := launch_gap_ns, skip := skip, runs := runs)
    GROUP BY run_id, trace_id, rank, stage, step, device, scope, stream
)
SELECT w.run_id, w.trace_id, w.rank, w.stage, w.step, w.device, w.scope, w.stream,
       w.events, w.first_ns, w.last_end_ns,
       (w.last_end_ns - w.first_ns)::BIGINT AS window_ns,
       (w.last_end_ns - w.first_ns - coalesce(c.idle_ns, 0))::BIGINT AS busy_ns,
       coalesce(c.idle_ns, 0)::BIGINT AS idle_ns,
       coalesce(c.gaps, 0)::BIGINT AS gaps,
       coalesce(c.host_bound_ns, 0)::BIGINT AS host_bound_ns,
       coalesce(c.launch_latency_ns, 0)::BIGINT AS launch_latency_ns,
       coalesce(c.sync_ns, 0)::BIGINT AS sync_ns,
       coalesce(c.graph_internal_ns, 0)::BIGINT AS graph_internal_ns,
       coalesce(c.other_ns, 0)::BIGINT AS other_ns
FROM _win w
LEFT JOIN _c c
  ON c.trace_id = w.trace_id AND c.rank = w.rank AND c.stage = w.stage AND c.step = w.step
 AND c.device IS NOT DISTINCT FROM w.device AND c.scope = w.scope
 AND c.stream IS NOT DISTINCT FROM w.stream;

-- _idle_worst_gaps_for(run, n := 10, launch_gap_ns := 30000, skip := false,
-- runs := NULL): the n longest device gaps of each (run, trace, rank,
-- stage), edge steps left out (steps.edge), ties by kernel_id;
-- _idle_gaps_for's device columns and
--   next_name_id, prev_name_id  the events after and before the gap
--   site_id         next's Python site (its own, else its launch's): for a
--                   host-bound gap, where the late launch came from
CREATE MACRO _idle_worst_gaps_for(run, n := 10, launch_gap_ns := 30000, skip := false, runs := NULL) AS TABLE
WITH _w AS (
    SELECT g.*
    FROM _idle_gaps_for(run, launch_gap_ns := launch_gap_ns, skip := skip, runs := runs) g
    JOIN steps s ON s.trace_id = g.trace_id AND s.step = g.step
    WHERE g.scope = 'device' AND NOT s.edge
    QUALIFY row_number() OVER (PARTITION BY g.run_id, g.trace_id, g.rank, g.stage
                               ORDER BY g.gap_ns DESC, g.kernel_id) <= n
)
SELECT w.run_id, w.trace_id, w.rank, w.stage, w.step, w.device, w.kernel_id, w.prev_kernel_id,
       w.gap_start_ns, w.gap_ns, w.cause, w.launch_id, w.launch_ts_ns,
       k.name_id AS next_name_id, p.name_id AS prev_name_id,
       coalesce(k.site_id, l.site_id) AS site_id
FROM _w w
JOIN kernels k ON k.kernel_id = w.kernel_id
JOIN kernels p ON p.kernel_id = w.prev_kernel_id
LEFT JOIN launches l ON l.launch_id = w.launch_id;

-- _idle_steps_saved(run, launch_gap_ns := 30000, fresh := NULL) and
-- _idle_worst_gaps_saved(...): the saved rows of run_id run
-- (idle_step_store, idle_gap_store), what the *_cached macros below read
-- when the copy is current. They take the *_cached macros' arguments and
-- ignore all but run, so that a query that knows the copy current (its
-- freshness checked once, launch_gap_ns the saved 30 us) names them in
-- place of the *_cached ones (queries/idle.go): DuckDB binds a macro's
-- whole body even where a constant skips it, and binding the computing
-- branch was most of what such a query cost (15-20 ms each of a triage's
-- three idle queries).
CREATE MACRO _idle_steps_saved(run, launch_gap_ns := 30000, fresh := NULL) AS TABLE
SELECT * FROM idle_step_store WHERE run_id = run;

CREATE MACRO _idle_worst_gaps_saved(run, launch_gap_ns := 30000, fresh := NULL) AS TABLE
SELECT * FROM idle_gap_store WHERE run_id = run;

-- _idle_steps_cached(run, launch_gap_ns := 30000, fresh := NULL):
-- _idle_steps_for(run), read from idle_step_store when launch_gap_ns is
-- the saved one and the copy is current (fresh, or checked when NULL).
-- A given fresh reaches both branches as a constant, not through _f, which
-- then has no row (and reads nothing): DuckDB ran a branch whose skip was
-- a CTE's value, and a CTE computing the check it did not need (the 1
-- M-event bench run's kernels were read for nothing, 0.05-0.1 CPU-s per
-- query), and drops a branch whose filter folds to false.
CREATE MACRO _idle_steps_cached(run, launch_gap_ns := 30000, fresh := NULL) AS TABLE
WITH _f AS (
    SELECT launch_gap_ns = _idle_default_gap() AND _steps_current(run) AS saved WHERE fresh IS NULL
)
SELECT * FROM _idle_steps_saved(run)
WHERE CASE WHEN fresh IS NOT NULL THEN launch_gap_ns = _idle_default_gap() AND fresh ELSE (SELECT saved FROM _f) END
UNION ALL
SELECT * FROM _idle_steps_for(run, launch_gap_ns := launch_gap_ns,
    skip := CASE WHEN fresh IS NOT NULL THEN launch_gap_ns = _idle_default_gap() AND fresh ELSE (SELECT saved FROM _f) END);

-- _idle_worst_gaps_cached(run, launch_gap_ns := 30000, fresh := NULL):
-- _idle_worst_gaps_for(run), read from idle_gap_store as
-- _idle_steps_cached reads idle_step_store.
CREATE MACRO _idle_worst_gaps_cached(run, launch_gap_ns := 30000, fresh := NULL) AS TABLE
WITH _f AS (
    SELECT launch_gap_ns = _idle_default_gap() AND _steps_current(run) AS saved WHERE fresh IS NULL
)
SELECT * FROM _idle_worst_gaps_saved(run)
WHERE CASE WHEN fresh IS NOT NULL THEN launch_gap_ns = _idle_default_gap() AND fresh ELSE (SELECT saved FROM _f) END
UNION ALL
SELECT * FROM _idle_worst_gaps_for(run, launch_gap_ns := launch_gap_ns,
    skip := CASE WHEN fresh IS NOT NULL THEN launch_gap_ns = _idle_default_gap() AND fresh ELSE (SELECT saved FROM _f) END);

-- _idle_step_causes(saved_runs, computed_run): per (run, trace, rank,
-- stage, step) the step's device rows summed over its devices: idle_ns and
-- the five causes (host_bound_ns, launch_latency_ns, sync_ns,
-- graph_internal_ns, other_ns), read from idle_step_store for the runs
-- listed in saved_runs (those whose saved copy is current) and computed
-- for computed_run (NULL: none). What compare's decomposition and
-- history's idle metrics read (queries/compare_steps.sql, history_steps.sql).
CREATE MACRO _idle_step_causes(saved_runs, computed_run) AS TABLE
SELECT run_id, trace_id, rank, stage, step,
       sum(idle_ns)::BIGINT AS idle_ns,
       sum(host_bound_ns)::BIGINT AS host_bound_ns,
       sum(launch_latency_ns)::BIGINT AS launch_latency_ns,
       sum(sync_ns)::BIGINT AS sync_ns,
       sum(graph_internal_ns)::BIGINT AS graph_internal_ns,
       sum(other_ns)::BIGINT AS other_ns
FROM (SELECT * FROM idle_step_store WHERE list_contains(saved_runs::BIGINT[], run_id::BIGINT)
      UNION ALL
      SELECT * FROM _idle_steps_for(computed_run, skip := computed_run IS NULL))
WHERE scope = 'device'
GROUP BY run_id, trace_id, rank, stage, step;

-- _idle_step_causes_saved(saved_runs, computed_run): _idle_step_causes
-- with no run to compute (computed_run is ignored): the rows of the runs
-- in saved_runs, from idle_step_store alone. A query that has no run to
-- compute names it in place of _idle_step_causes (queries/compare.go,
-- history.go), so that DuckDB does not bind _idle_steps_for (see
-- _idle_steps_saved); the sums are _idle_step_causes'.
CREATE MACRO _idle_step_causes_saved(saved_runs, computed_run) AS TABLE
SELECT run_id, trace_id, rank, stage, step,
       sum(idle_ns)::BIGINT AS idle_ns,
       sum(host_bound_ns)::BIGINT AS host_bound_ns,
       sum(launch_latency_ns)::BIGINT AS launch_latency_ns,
       sum(sync_ns)::BIGINT AS sync_ns,
       sum(graph_internal_ns)::BIGINT AS graph_internal_ns,
       sum(other_ns)::BIGINT AS other_ns
FROM idle_step_store
WHERE list_contains(saved_runs::BIGINT[], run_id::BIGINT) AND scope = 'device'
GROUP BY run_id, trace_id, rank, stage, step;

-- idle_gaps(run, launch_gap_ns := 30000): every gap of one run (id or
-- label), in both scopes, with its cause (_idle_gaps_for's columns).
CREATE MACRO idle_gaps(run, launch_gap_ns := 30000) AS TABLE
SELECT * FROM _idle_gaps_for(_run_id(run), launch_gap_ns := launch_gap_ns);

-- idle_steps(run, launch_gap_ns := 30000): busy and idle time by cause per
-- step, device and stream of one run (id or label) (_idle_steps_for's
-- columns), read from the saved copy when current.
CREATE MACRO idle_steps(run, launch_gap_ns := 30000) AS TABLE
SELECT * FROM _idle_steps_cached(_run_id(run), launch_gap_ns := launch_gap_ns);

COMMENT ON MACRO TABLE idle_gaps IS 'Every gap in GPU activity inside the steps of one run (id or label), per device and per stream, with its cause: graph_internal, sync, host_bound, launch_latency (gap < launch_gap_ns, default 30000), other.';
COMMENT ON MACRO TABLE idle_steps IS 'Busy time and idle time by cause per step, device and stream of one run (id or label); busy plus the causes is the window exactly.';
COMMENT ON MACRO TABLE _idle_gaps_for IS 'Internal (run_id only, always recomputes): use idle_gaps.';
COMMENT ON MACRO TABLE _idle_steps_for IS 'Internal (run_id only, always recomputes): use idle_steps.';
