-- overlap: per-kernel overlap, GPU busy time, and their saved copies.
--
-- Triage's overlap table reads these figures; this module computes them once,
-- in SQL, so the triage report and ad hoc questions agree to the
-- nanosecond.
--
-- Overlap is judged per (trace, stage, device): two GPU events overlap only
-- when they ran on the same device of the same trace file and carry the same
-- per-kernel stage. Within that group a kernel is
--   hidden            while an event on a *different* stream is active,
--   hidden by compute while such an event is a `compute` kernel,
--   exclusive         otherwise (same-stream overlap, PDL, stays exclusive),
-- so hidden_ns + exclusive_ns = dur_ns for every kernel, and a zero-length
-- kernel has 0 / 0.
--
-- How it is computed (no per-event loop, no pairwise interval join): every
-- kernel becomes two points, +1 at its start and -1 at its end.
--   1. Sorted per stream, running sums give each stream's "some kernel is
--      active" and "some compute kernel is active" indicators; their changes
--      become +1/-1 deltas, so same-stream overlap counts once.
--   2. Sorted per device, running sums of those deltas give, between any two
--      consecutive instants, the number of streams that are active and the
--      number of streams that run compute. Weighting each gap by "at least two
--      streams active" (or "compute on >= 1 / >= 2 streams") and summing gives
--      cumulative integrals; a kernel's hidden time is the integral at its end
--      minus the integral at its start (its own stream is one of the active
--      ones, so ">= 2" means "another stream").
--   3. Hidden-by-compute depends on whether the kernel's own stream is itself
--      running compute at that instant, which only a per-stream view knows:
--      back in per-stream order, each gap between two points of the stream
--      takes the ">= 2 compute streams" integral when the stream itself runs
--      compute there, else the ">= 1" integral.
--   4. Sorted by kernel_id, each kernel's start and end points (and a row
--      with its neighbours on the stream) sit side by side: end minus start.
-- Each pass is one sort followed by window functions with an empty OVER ()
-- (DuckDB's streaming windows, which follow the order of the sorted
-- subquery, documented as order preserving). Partitions are not needed: each
-- (trace, stage, device[, stream]) group is contiguous in the sort order, and
-- every running count returns to zero at the end of its group, so integrals
-- only carry a constant offset across groups, which cancels in the end-minus-
-- start differences. (Measured on 2 M points, DuckDB 1.5: a running sum in
-- a partitioned window took ~250 ms, a sort plus a streaming running sum
-- ~145 ms; RANGE frames with per-row offsets took seconds.)
--
-- Filtering the view by run_id cannot be pushed below the sorts, so queries
-- call the table macro kernel_overlap_for(run) with the run id instead; the
-- view is kernel_overlap_for(NULL), i.e. every run. The whole costs about
-- 2 CPU-seconds per million kernels, so a run's result is also saved once
-- (kernel_overlap_store, by aggregates.SaveOverlap after ingest) and read back
-- by kernel_overlap_cached while the run's fingerprint matches.
--
-- One algorithm, two implementations: aggregates/overlap_sweep.go runs this
-- sweep in Go, in one pass, when it saves a run's overlap (a run with a
-- group over 512 k kernels is left to kernel_overlap_for, which spills);
-- kernel_overlap_for is the definition, and what reads the overlap of a
-- run without a current saved copy (and a lake) compute.
-- TestSweepOverlapMatchesSQL (ingest) holds the two to the same rows.

-- _overlap_group(trace_id, stage, device): one sortable BIGINT per (trace,
-- stage, device), the unit within which events overlap: trace_id in the high
-- 31 bits, a stage code in the next 12 (the four stages prefill, decode, mixed, unknown get
-- 0-3, any other label a hash-derived code), the device in the low 20 (NULL
-- = all ones; device ids are assumed in [0, 2^20 - 2], as CUDA/HIP give).
-- One integer key sorts about twice as fast as the three columns.
CREATE MACRO _overlap_group(trace_id, stage, device) AS
    (trace_id::BIGINT << 32)
    | (CASE stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1
                  WHEN 'mixed' THEN 2 WHEN 'unknown' THEN 3
                  ELSE (4 + hash(stage) % 4092)::BIGINT END << 20)
    | coalesce(device, 1048575)::BIGINT;

-- kernel_overlap_for(run, rank := NULL, stage := NULL, skip := false,
-- runs := NULL): one row per GPU event of run `run` (every run when NULL),
-- or of every run listed in `runs` (a list of run ids; start ranks are
-- then numbered across them, still consecutive within each group),
-- optionally only one rank and/or stage (filtering first is exact: overlap
-- never crosses a trace or a stage), with its overlap split; `skip` true
-- returns nothing without sorting anything (kernel_overlap_cached uses
-- it). Columns:
--   kernel_id, trace_id, run_id, rank, stage, device, stream, name_id, ts_ns,
--   dur_ns               as in `kernels`
--   hidden_ns            time during which an event on another stream of the
--                        same (trace, stage, device) was active
--   hidden_by_compute_ns part of hidden_ns during which one of those events was
--                        a compute kernel (kernel_names.category = 'compute')
--   exclusive_ns         dur_ns - hidden_ns
--   start_rank           position of this kernel's start among the starts
--                        swept together (ordered by group, time, kernel_id):
--                        unique within one call and consecutive within each
--                        (trace, stage, device); kernel_overlap_cached counts
--                        over the whole run even when filtered
--   starts_before_end    how many starts precede this kernel's end in that
--                        order, so the kernels with start_rank in
--                        (start_rank, starts_before_end] are exactly those of
--                        the same group that start while this one runs (used to
--                        list overlapping pairs without an interval join)
--   prev_kernel_id, next_kernel_id
--                        the kernels that start just before / just after this
--                        one on the same stream of the same (trace, stage,
--                        device), ties in start by kernel_id; NULL at either
--                        end (the dependency signal's neighbours)
--   union_share_ns       GPU busy time (union of the group's intervals) from
--                        each of this kernel's two points to the group's next
--                        point: every busy instant is counted once, at the
--                        kernel whose start or end precedes it, so summing it
--                        over a group (or a stage) gives its GPU busy time
--                        without another sort
-- A NULL device or stream is treated as one more (unnamed) device or stream;
-- groups are keyed by _overlap_group.
CREATE MACRO kernel_overlap_for(run, rank := NULL, stage := NULL, skip := false, runs := NULL) AS TABLE
WITH _k AS (
    SELECT k.kernel_id, _overlap_group(k.trace_id, k.stage, k.device) AS group_key,
           coalesce(k.stream, -1) AS stream_key,
           k.ts_ns, k.dur_ns,
           coalesce(n.category = 'compute', false)::INTEGER AS comp
    FROM kernels k
    JOIN kernel_names n USING (name_id)
    WHERE CASE WHEN runs IS NULL THEN run IS NULL OR k.run_id = run ELSE _run_in(k.run_id, runs) END
      AND (rank IS NULL OR k.rank = rank)
      AND (stage IS NULL OR k.stage = stage)
      AND NOT skip
),
_points AS (
    -- d = +1 at the start, -1 at the end. At one instant starts sort before
    -- ends in both passes, so every running count below stays >= 0 (which
    -- the packing relies on); the order among points of one instant never
    -- changes a length, because the gap between them is zero.
    SELECT kernel_id, group_key, stream_key, comp,
           CASE WHEN p.d = 1 THEN ts_ns ELSE ts_ns + dur_ns END AS t, p.d
    FROM _k, (VALUES (1), (-1)) p(d)
),
_stream_sweep AS (
    -- Running sums are the costly part of a streaming window (about 35 ns a
    -- row each), so independent counters share one BIGINT sum:
    -- active + 2^32 * active_compute.
    SELECT *,
           sum(d + d * comp * 4294967296) OVER (ROWS UNBOUNDED PRECEDING)::BIGINT AS packed,
           row_number() OVER () AS stream_seq
    FROM (
        SELECT * FROM _points
        ORDER BY group_key, stream_key, t, d DESC
    )
),
_stream_deltas AS (
    -- Changes of "this stream is active" / "this stream runs compute".
    SELECT kernel_id, group_key, t, d, stream_seq,
           (active > 0)::INTEGER - (active - d > 0)::INTEGER AS d_streams,
           (active_compute > 0)::INTEGER
             - (active_compute - d * comp > 0)::INTEGER AS d_compute_streams,
           active > 0 AS stream_active,
           active_compute > 0 AS stream_compute
    FROM (
        SELECT *, packed & 4294967295 AS active, packed >> 32 AS active_compute
        FROM _stream_sweep
    )
),
_device_sweep AS (
    -- packed = streams active + 2^16 * streams running compute
    --          + 2^32 * starts so far (all >= 0, streams < 2^16)
    SELECT *,
           -- zero between points of one instant; across a group boundary
           -- the counts are zero, so that gap weighs nothing
           coalesce(lead(t) OVER () - t, 0) AS gap,
           sum(d_streams + d_compute_streams * 65536 + (d = 1)::BIGINT * 4294967296)
               OVER (ROWS UNBOUNDED PRECEDING)::BIGINT AS packed
    FROM (
        SELECT * FROM _stream_deltas
        ORDER BY group_key, t, d DESC, kernel_id
    )
),
_device_weights AS (
    SELECT kernel_id, t, d, stream_seq, stream_active, stream_compute,
           packed >> 32 AS starts,
           gap * ((packed & 65535) >= 1)::BIGINT AS busy_gap,
           gap * ((packed & 65535) >= 2)::BIGINT AS multi_stream_gap,
           -- two gap weights in one HUGEINT: >= 1 and (2^64 *) >= 2
           -- streams running compute
           (gap * (((packed >> 16) & 65535) >= 1)::BIGINT)::HUGEINT
             | ((gap * (((packed >> 16) & 65535) >= 2)::BIGINT)::HUGEINT << 64) AS compute_gaps
    FROM _device_sweep
),
_device_integrals AS (
    -- Integrals from the start of the sweep up to this point's instant
    -- (running sum minus the point's own gap).
    SELECT kernel_id, d, stream_seq, stream_active, stream_compute, starts, busy_gap,
           CAST(multi_stream_before AS BIGINT) AS multi_stream_ns,
           (compute_before & 18446744073709551615)::BIGINT AS compute_1_ns,
           (compute_before >> 64)::BIGINT AS compute_2_ns
    FROM (
        SELECT *,
               sum(multi_stream_gap) OVER (ROWS UNBOUNDED PRECEDING) - multi_stream_gap AS multi_stream_before,
               sum(compute_gaps) OVER (ROWS UNBOUNDED PRECEDING) - compute_gaps AS compute_before
        FROM _device_weights
    )
),
_stream_gaps AS (
    -- Back in per-stream order: the gap to the stream's next point is
    -- hidden by compute when another stream runs compute, i.e. when at least
    -- two streams do if this one does, else when at least one does. Gaps
    -- where the stream is idle belong to no kernel of it and weigh nothing,
    -- which also drops the step across a group boundary.
    SELECT kernel_id, d, starts, busy_gap, multi_stream_ns,
           CASE WHEN NOT stream_active THEN 0
                WHEN stream_compute THEN lead(compute_2_ns) OVER () - compute_2_ns
                ELSE lead(compute_1_ns) OVER () - compute_1_ns
           END AS by_compute_gap
    FROM (SELECT * FROM _device_integrals ORDER BY stream_seq)
),
_stream_integrals AS (
    SELECT kernel_id, d, starts, busy_gap, multi_stream_ns,
           CAST(sum(by_compute_gap) OVER (ROWS UNBOUNDED PRECEDING) - by_compute_gap AS BIGINT) AS by_compute_ns
    FROM _stream_gaps
),
_neighbours AS (
    -- Each kernel's previous and next kernel on its stream, by start: one
    -- sort of the kernels and streaming lag/lead, rows shaped like the
    -- points (d = 0) so that the pivot below picks them up without a join.
    SELECT kernel_id, 0 AS d, NULL::BIGINT AS starts, NULL::BIGINT AS busy_gap,
           NULL::BIGINT AS multi_stream_ns, NULL::BIGINT AS by_compute_ns,
           CASE WHEN lag(stream_group) OVER () = stream_group THEN lag(kernel_id) OVER () END AS prev_kernel_id,
           CASE WHEN lead(stream_group) OVER () = stream_group THEN lead(kernel_id) OVER () END AS next_kernel_id
    FROM (
        SELECT kernel_id, (group_key, stream_key) AS stream_group
        FROM _k
        ORDER BY group_key, stream_key, ts_ns, kernel_id
    )
),
_per_kernel AS (
    -- A kernel's start, neighbour and end rows side by side (a sort on
    -- kernel_id costs about a third of a million-group hash aggregate
    -- here): each figure is the integral at the end minus the integral at
    -- the start.
    SELECT kernel_id, d,
           lead(multi_stream_ns, 2) OVER () - multi_stream_ns AS hidden_ns,
           lead(by_compute_ns, 2) OVER () - by_compute_ns AS hidden_by_compute_ns,
           starts AS start_rank,
           lead(starts, 2) OVER () AS starts_before_end,
           busy_gap + lead(busy_gap, 2) OVER () AS union_share_ns,
           lead(prev_kernel_id) OVER () AS prev_kernel_id,
           lead(next_kernel_id) OVER () AS next_kernel_id
    FROM (
        SELECT * FROM (
            SELECT *, NULL::BIGINT AS prev_kernel_id, NULL::BIGINT AS next_kernel_id
            FROM _stream_integrals
            UNION ALL
            SELECT * FROM _neighbours
        )
        ORDER BY kernel_id, d DESC
    )
)
SELECT k.kernel_id, k.trace_id, k.run_id, k.rank, k.stage, k.device, k.stream,
       k.name_id, k.ts_ns, k.dur_ns,
       p.hidden_ns, p.hidden_by_compute_ns, k.dur_ns - p.hidden_ns AS exclusive_ns,
       p.start_rank, p.starts_before_end, p.union_share_ns,
       p.prev_kernel_id, p.next_kernel_id
FROM _per_kernel p
JOIN kernels k USING (kernel_id)
WHERE p.d = 1;

-- kernel_overlap: kernel_overlap_for over every run, for ad hoc SQL. Same
-- columns. Filter it by run_id only for small warehouses; otherwise call
-- kernel_overlap_for(run_id), which sorts only that run's kernels.
CREATE VIEW kernel_overlap AS
SELECT * FROM kernel_overlap_for(NULL);

-- _overlap_fingerprint(run): changes whenever the inputs of the run's
-- overlap change: its kernels (ids, times, streams, devices, stages, ranks,
-- names) or the category of any name they use (a reclassification). The
-- pairs' hashes are summed as HUGEINT, which cannot wrap (a bit_xor of
-- them let the pairs of a name used by an even number of kernels cancel
-- out; migration 0014 forgot the copies saved under that fingerprint).
-- In a lake (the variable tracehouse_lake set: lake.Open sets it on every
-- connection) a committed trace never changes, so the fingerprint is the
-- constant 0, what the lake's kernel_overlap_runs and step_store_runs
-- views hold, and the kernels are not read.
CREATE MACRO _overlap_fingerprint(run) AS
    CASE WHEN getvariable('tracehouse_lake') IS NOT NULL THEN 0::UBIGINT ELSE (
    SELECT hash(count(*), sum(k.dur_ns), max(k.kernel_id),
                bit_xor(hash(k.kernel_id, k.ts_ns, k.dur_ns, k.stream, k.device, k.stage, k.rank, k.name_id)),
                sum(hash(k.name_id, n.category)::HUGEINT))
    FROM kernels k
    JOIN kernel_names n USING (name_id)
    WHERE k.run_id = run AND getvariable('tracehouse_lake') IS NULL
    ) END;

-- _overlap_fp(run, ofp): ofp when given (the run's _overlap_fingerprint,
-- computed once by the caller; a UBIGINT or its text), else computed. A
-- constant ofp folds the CASE away, and the kernels are not read.
CREATE MACRO _overlap_fp(run, ofp) AS
    CASE WHEN ofp IS NULL THEN _overlap_fingerprint(run) ELSE ofp::UBIGINT END;

-- _overlap_current(run, ofp := NULL): whether run's saved per-kernel
-- overlap (kernel_overlap_store, and the busy time summed from it,
-- device_busy_store) is current: its record (kernel_overlap_runs) holds
-- the fingerprint the run's kernels have now (_overlap_fp: ofp when the
-- caller computed it). The one definition every reader of that copy asks
-- (kernel_overlap_cached, device_busy_cached, queries/run_detail.sql,
-- aggregates' overlap_store_current.sql, lake.Write), false without a
-- record. The fingerprint is compared outside the record's subquery: with
-- run from a column (a statement over a list of runs), DuckDB 1.5.6
-- compared the fingerprint's correlated subquery wrongly in a WHERE clause
-- and matched no run. _overlap_current_given(run, ofp) is the same with
-- ofp given (not NULL), which a query that computed it names in place of
-- _overlap_current (queries/stage_busy.go): DuckDB binds the computing
-- branch of _overlap_fp a constant skips (0.5 of 1 ms).
CREATE MACRO _overlap_current_given(run, ofp := NULL) AS
    coalesce(list_contains((SELECT list(fingerprint) FROM kernel_overlap_runs WHERE run_id = run),
                           ofp::UBIGINT), false);
CREATE MACRO _overlap_current(run, ofp := NULL) AS
    _overlap_current_given(run, ofp := _overlap_fp(run, ofp));

-- kernel_overlap_cached(run, rank := NULL, stage := NULL, ofp := NULL): the
-- rows of kernel_overlap_for(run, rank, stage), read from
-- kernel_overlap_store when the run's saved copy is current, computed
-- otherwise; ofp is the run's fingerprint when the caller computed it
-- (_overlap_fp). Same columns.
CREATE MACRO kernel_overlap_cached(run, rank := NULL, stage := NULL, ofp := NULL) AS TABLE
WITH _fresh AS (SELECT _overlap_current(run, ofp) AS fresh)
SELECT s.*
FROM kernel_overlap_store s
WHERE s.run_id = run
  AND (rank IS NULL OR s.rank = rank)
  AND (stage IS NULL OR s.stage = stage)
  AND (SELECT fresh FROM _fresh)
UNION ALL
SELECT *
FROM kernel_overlap_for(run, rank := rank, stage := stage, skip := (SELECT fresh FROM _fresh));

-- device_busy_for(run, skip := false): one row per (trace, stage, device) of
-- run `run` (every run when NULL; nothing when skip). Columns:
--   run_id, trace_id, rank, stage, device
--   kernels     number of GPU events
--   kernel_ns   summed dur_ns (same-stream and cross-stream overlap counted twice)
--   busy_ns     length of the union of the events' intervals (GPU busy time)
--   first_ns    earliest start; last_end_ns: latest end
--   streams     number of distinct streams (NULL stream counts as one)
-- The union is one streaming pass over events sorted by (group, start).
CREATE MACRO device_busy_for(run, skip := false) AS TABLE
WITH _reach AS (
    -- reach: the latest end so far, packed as (group << 64) + end_ns so that
    -- a streaming running max restarts at each group (keys and times are
    -- non-negative, so the packing orders like the pair)
    SELECT *,
           max((group_key::HUGEINT << 64) + end_ns) OVER (ROWS UNBOUNDED PRECEDING) AS reach
    FROM (
        SELECT k.run_id, k.trace_id, k.rank, k.stage, k.device, k.stream,
               _overlap_group(k.trace_id, k.stage, k.device) AS group_key,
               k.ts_ns, k.ts_ns + k.dur_ns AS end_ns, k.dur_ns
        FROM kernels k
        WHERE (run IS NULL OR k.run_id = run) AND NOT skip
        ORDER BY group_key, ts_ns
    )
),
_union AS (
    SELECT *,
           CASE WHEN lag(reach) OVER () >> 64 = group_key
                THEN (lag(reach) OVER () & 18446744073709551615)::BIGINT END AS prior_end_ns
    FROM _reach
)
SELECT run_id, trace_id, rank, stage, device,
       count(*) AS kernels,
       sum(dur_ns)::BIGINT AS kernel_ns,
       -- each event adds the part of it after every earlier event's end
       sum(greatest(0, end_ns - greatest(ts_ns, coalesce(prior_end_ns, ts_ns))))::BIGINT AS busy_ns,
       min(ts_ns) AS first_ns,
       max(end_ns) AS last_end_ns,
       count(DISTINCT coalesce(stream, -1)) AS streams
FROM _union
GROUP BY run_id, trace_id, rank, stage, device;

-- _device_busy_saved(run, runs := NULL): device_busy_for's rows for run
-- `run` (every run when NULL, or the runs listed), summed from the saved
-- per-kernel overlap (kernel_overlap_store: union_share_ns adds up to the
-- busy time): what aggregates.SaveOverlap stores in device_busy_store, and
-- what a lake's device_busy_store view shows.
CREATE MACRO _device_busy_saved(run, runs := NULL) AS TABLE
SELECT run_id, trace_id, rank, stage, device,
       count(*) AS kernels,
       sum(dur_ns)::BIGINT AS kernel_ns,
       sum(union_share_ns)::BIGINT AS busy_ns,
       min(ts_ns) AS first_ns,
       max(ts_ns + dur_ns) AS last_end_ns,
       count(DISTINCT coalesce(stream, -1)) AS streams
FROM kernel_overlap_store
WHERE CASE WHEN runs IS NULL THEN run IS NULL OR run_id = run ELSE _run_in(run_id, runs) END
GROUP BY run_id, trace_id, rank, stage, device;

-- _device_busy_store_rows(run, ofp := NULL): the rows device_busy_store
-- holds for run_id run, what device_busy_cached reads when the run's saved
-- overlap is current. It takes device_busy_cached's arguments and ignores
-- ofp, so that a query that knows the copy current (queries/stage_busy.go,
-- after queries/overlap_fresh.sql) names it in place of device_busy_cached
-- and DuckDB does not bind device_busy_for (see _idle_steps_saved): a
-- triage's stage_busy.sql took 8-11 ms of CPU warm that way, 3 without it.
CREATE MACRO _device_busy_store_rows(run, ofp := NULL) AS TABLE
SELECT run_id, trace_id, rank, stage, device, kernels, kernel_ns, busy_ns,
       first_ns, last_end_ns, streams
FROM device_busy_store
WHERE run_id = run;

-- device_busy_cached(run, ofp := NULL): device_busy_for(run), read from
-- device_busy_store when the run's saved overlap is current, computed
-- otherwise (ofp as in kernel_overlap_cached). Same columns.
CREATE MACRO device_busy_cached(run, ofp := NULL) AS TABLE
WITH _fresh AS (SELECT _overlap_current(run, ofp) AS fresh)
SELECT * FROM _device_busy_store_rows(run)
WHERE (SELECT fresh FROM _fresh)
UNION ALL
SELECT * FROM device_busy_for(run, skip := (SELECT fresh FROM _fresh));

-- overlap_kernels(run, rank := NULL, stage := NULL): kernel_overlap_for's
-- columns for one run (id or label), read from the copy saved at ingest
-- when it is current, computed otherwise.
CREATE MACRO overlap_kernels(run, rank := NULL, stage := NULL) AS TABLE
SELECT * FROM kernel_overlap_cached(_run_id(run), rank := rank, stage := stage);

-- overlap_device_busy(run): GPU busy time per (trace, stage, device) of one
-- run (id or label): device_busy_for's columns.
CREATE MACRO overlap_device_busy(run) AS TABLE
SELECT * FROM device_busy_cached(_run_id(run));

COMMENT ON MACRO TABLE overlap_kernels IS 'Per-kernel overlap of one run (id or label): hidden_ns, hidden_by_compute_ns, exclusive_ns, stream neighbours; optional rank := and stage := filters.';
COMMENT ON MACRO TABLE overlap_device_busy IS 'GPU busy time (union of kernel intervals) per trace, stage and device of one run (id or label).';
COMMENT ON MACRO TABLE kernel_overlap_for IS 'Internal (run_id only, always recomputes): use overlap_kernels.';
COMMENT ON MACRO TABLE kernel_overlap_cached IS 'Internal (run_id only): use overlap_kernels.';
COMMENT ON MACRO TABLE device_busy_for IS 'Internal (run_id only, always recomputes): use overlap_device_busy.';
COMMENT ON MACRO TABLE device_busy_cached IS 'Internal (run_id only): use overlap_device_busy.';
COMMENT ON VIEW kernel_overlap IS 'Per-kernel overlap of every run (recomputed on each read; prefer overlap_kernels(run)).';
