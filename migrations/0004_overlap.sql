-- 0004_overlap: per-kernel overlap, GPU busy time and Python-scope transfer.
--
-- triage.md section 4 defines the figures; this file computes them once, in
-- SQL, so the triage report and ad hoc questions agree to the nanosecond.
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
-- 2 CPU-seconds per million kernels, so a run's result can also be saved
-- once (kernel_overlap_store, below) and read back by kernel_overlap_cached.

-- _overlap_group(trace_id, stage, device): one sortable BIGINT per (trace,
-- stage, device), the unit within which events overlap: trace_id in the high
-- 31 bits, a stage code in the next 12 (the four stages of warehouse.md get
-- 0-3, any other label a hash-derived code), the device in the low 20 (NULL
-- = all ones; device ids are assumed in [0, 2^20 - 2], as CUDA/HIP give).
-- One integer key sorts about twice as fast as the three columns.
CREATE MACRO _overlap_group(trace_id, stage, device) AS
    (trace_id::BIGINT << 32)
    | (CASE stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1
                  WHEN 'mixed' THEN 2 WHEN 'unknown' THEN 3
                  ELSE (4 + hash(stage) % 4092)::BIGINT END << 20)
    | coalesce(device, 1048575)::BIGINT;

-- kernel_overlap_for(run, rank := NULL, stage := NULL, skip := false): one row
-- per GPU event of run `run` (every run when NULL), optionally only one rank
-- and/or stage (filtering first is exact: overlap never crosses a trace or a
-- stage), with its overlap split; `skip` true returns nothing without sorting
-- anything (kernel_overlap_cached uses it). Columns:
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
CREATE MACRO kernel_overlap_for(run, rank := NULL, stage := NULL, skip := false) AS TABLE
WITH _k AS (
    SELECT k.kernel_id, _overlap_group(k.trace_id, k.stage, k.device) AS group_key,
           coalesce(k.stream, -1) AS stream_key,
           k.ts_ns, k.dur_ns,
           coalesce(n.category = 'compute', false)::INTEGER AS comp
    FROM kernels k
    JOIN kernel_names n USING (name_id)
    WHERE (run IS NULL OR k.run_id = run)
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

-- The sweep costs about 2 CPU-seconds per million kernels (four sorts of two
-- points per kernel), too much to repeat on every triage of a large run. A
-- run's result can be saved once (ingest.SaveOverlap, after ingest)
-- and read back by kernel_overlap_cached, which falls back to computing when
-- the saved copy is missing or no longer matches the run.

-- kernel_overlap_store: saved kernel_overlap_for(run) rows, same columns.
CREATE TABLE kernel_overlap_store (
    kernel_id            BIGINT NOT NULL,
    trace_id             INTEGER NOT NULL,
    run_id               INTEGER NOT NULL,
    rank                 INTEGER NOT NULL,
    stage                VARCHAR NOT NULL,
    device               INTEGER,
    stream               BIGINT,
    name_id              INTEGER NOT NULL,
    ts_ns                BIGINT NOT NULL,
    dur_ns               BIGINT NOT NULL,
    hidden_ns            BIGINT NOT NULL,
    hidden_by_compute_ns BIGINT NOT NULL,
    exclusive_ns         BIGINT NOT NULL,
    start_rank           BIGINT NOT NULL,
    starts_before_end    BIGINT NOT NULL,
    union_share_ns       BIGINT NOT NULL,
    prev_kernel_id       BIGINT,
    next_kernel_id       BIGINT
);

-- kernel_overlap_runs: one row per run whose rows are in kernel_overlap_store
-- and complete (written last, deleted first, so a half-written copy is never
-- read). fingerprint = _overlap_fingerprint(run) when they were saved.
CREATE TABLE kernel_overlap_runs (
    run_id      INTEGER PRIMARY KEY,
    fingerprint UBIGINT NOT NULL,
    stored_at   TIMESTAMP NOT NULL
);

-- _overlap_fingerprint(run): changes whenever the inputs of the run's
-- overlap change: its kernels (ids, times, streams, devices, stages, ranks,
-- names) or the category of any name they use (a reclassification).
CREATE MACRO _overlap_fingerprint(run) AS (
    SELECT hash(count(*), sum(k.dur_ns), max(k.kernel_id),
                bit_xor(hash(k.kernel_id, k.ts_ns, k.dur_ns, k.stream, k.device, k.stage, k.rank, k.name_id)),
                bit_xor(hash(k.name_id, n.category)))
    FROM kernels k
    JOIN kernel_names n USING (name_id)
    WHERE k.run_id = run
);

-- kernel_overlap_cached(run, rank := NULL, stage := NULL): the rows of
-- kernel_overlap_for(run, rank, stage), read from kernel_overlap_store when
-- the run's saved copy is current, computed otherwise. Same columns.
CREATE MACRO kernel_overlap_cached(run, rank := NULL, stage := NULL) AS TABLE
WITH _fresh AS (
    SELECT count(*) > 0 AS fresh
    FROM kernel_overlap_runs
    WHERE run_id = run AND fingerprint = _overlap_fingerprint(run)
)
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

-- name_scope(timing_run, mapping_run): how each (stage, kernel name) of the
-- timing run borrows a Python scope from the mapping run (two-trace mode,
-- triage.md section 6). One row per (stage, name_id) present in the timing
-- run. Columns:
--   stage, name_id, short_name  the timing run's kernel name
--   match        'exact'    the mapping run has kernels with the same
--                           short_name in the same stage
--                'base'     no exact match, but the mapping run's kernels of
--                           that stage with the same base_name (template
--                           arguments removed) all share one short_name
--                'unmapped' neither (including a base name shared by several
--                           short names, and a name present only in another
--                           stage). No prefix/substring matching, ever.
--   mapped_short_name  the mapping run's short_name that lent the scope
--   site_id      the mapped name's dominant site in the mapping run: the
--                site with the most GPU time among its kernels, ties by the
--                smaller site_id; NULL when none of them has a site
--   op_name      at that site, the cpu_op name with the most GPU time, ties
--                by name; NULL when none
-- Timing never comes from the mapping run: this is names and sites only.
CREATE MACRO name_scope(timing_run, mapping_run) AS TABLE
WITH _mk AS (
    SELECT k.stage, n.short_name, n.base_name, k.site_id, o.name AS op_name, k.dur_ns
    FROM kernels k
    JOIN kernel_names n USING (name_id)
    LEFT JOIN cpu_ops o ON o.op_id = k.op_id
    WHERE k.run_id = mapping_run
),
_m_names AS (
    SELECT DISTINCT stage, short_name, base_name FROM _mk
),
_m_base AS (
    -- base names that identify exactly one short name in their stage
    SELECT stage, base_name, min(short_name) AS short_name
    FROM _m_names
    GROUP BY stage, base_name
    HAVING count(*) = 1
),
_m_site_time AS (
    SELECT stage, short_name, site_id, sum(dur_ns) AS ns
    FROM _mk
    WHERE site_id IS NOT NULL
    GROUP BY stage, short_name, site_id
),
_m_site AS (
    SELECT stage, short_name, first(site_id ORDER BY ns DESC, site_id) AS site_id
    FROM _m_site_time
    GROUP BY stage, short_name
),
_m_op AS (
    SELECT stage, short_name, first(op_name ORDER BY ns DESC, op_name) AS op_name
    FROM (
        SELECT k.stage, k.short_name, k.op_name, sum(k.dur_ns) AS ns
        FROM _mk k
        JOIN _m_site s
          ON s.stage = k.stage AND s.short_name = k.short_name AND s.site_id = k.site_id
        WHERE k.op_name IS NOT NULL
        GROUP BY k.stage, k.short_name, k.op_name
    )
    GROUP BY stage, short_name
),
_t_names AS (
    SELECT DISTINCT k.stage, k.name_id, n.short_name, n.base_name
    FROM kernels k
    JOIN kernel_names n USING (name_id)
    WHERE k.run_id = timing_run
),
_matched AS (
    SELECT t.stage, t.name_id, t.short_name,
           CASE WHEN e.short_name IS NOT NULL THEN 'exact'
                WHEN b.short_name IS NOT NULL THEN 'base'
                ELSE 'unmapped' END AS match,
           coalesce(e.short_name, b.short_name) AS mapped_short_name
    FROM _t_names t
    LEFT JOIN (SELECT DISTINCT stage, short_name FROM _m_names) e
           ON e.stage = t.stage AND e.short_name = t.short_name
    LEFT JOIN _m_base b
           ON b.stage = t.stage AND b.base_name = t.base_name
)
SELECT m.stage, m.name_id, m.short_name, m.match, m.mapped_short_name,
       s.site_id, o.op_name
FROM _matched m
LEFT JOIN _m_site s ON s.stage = m.stage AND s.short_name = m.mapped_short_name
LEFT JOIN _m_op o ON o.stage = m.stage AND o.short_name = m.mapped_short_name;

-- kernel_scope(timing_run, mapping_run): the Python scope every report uses
-- for each GPU event of `timing_run`. One row per kernel. Columns:
--   kernel_id, stage, name_id
--   match     'self' in single-trace mode (mapping_run NULL: the kernel's own
--             launch site), else name_scope's 'exact' / 'base' / 'unmapped'
--   site_id   single-trace: kernels.site_id; two-trace: the mapped name's
--             dominant site in the mapping run. NULL = unmapped/unresolved.
--   op_name   single-trace: the cpu_op that launched it (kernels.op_id);
--             two-trace: the dominant cpu_op at the mapped site
-- Mapping coverage (triage header) = sum(dur_ns) of rows with a site_id over
-- sum(dur_ns) of all rows (see queries/kernel_scope_coverage.sql).
CREATE MACRO kernel_scope(timing_run, mapping_run) AS TABLE
SELECT k.kernel_id, k.stage, k.name_id,
       CASE WHEN mapping_run IS NULL THEN 'self' ELSE coalesce(ns.match, 'unmapped') END AS match,
       CASE WHEN mapping_run IS NULL THEN k.site_id ELSE ns.site_id END AS site_id,
       CASE WHEN mapping_run IS NULL THEN o.name ELSE ns.op_name END AS op_name
FROM kernels k
LEFT JOIN cpu_ops o ON mapping_run IS NULL AND o.op_id = k.op_id
LEFT JOIN name_scope(timing_run, mapping_run) ns
       ON ns.stage = k.stage AND ns.name_id = k.name_id
WHERE k.run_id = timing_run;

-- device_busy_cached(run): device_busy_for(run), summed from the saved
-- overlap rows (kernel_overlap_store: union_share_ns adds up to the busy
-- time) when the run's copy is current, computed otherwise. Same columns.
CREATE MACRO device_busy_cached(run) AS TABLE
WITH _fresh AS (
    SELECT count(*) > 0 AS fresh
    FROM kernel_overlap_runs
    WHERE run_id = run AND fingerprint = _overlap_fingerprint(run)
)
SELECT run_id, trace_id, rank, stage, device,
       count(*) AS kernels,
       sum(dur_ns)::BIGINT AS kernel_ns,
       sum(union_share_ns)::BIGINT AS busy_ns,
       min(ts_ns) AS first_ns,
       max(ts_ns + dur_ns) AS last_end_ns,
       count(DISTINCT coalesce(stream, -1)) AS streams
FROM kernel_overlap_store
WHERE run_id = run AND (SELECT fresh FROM _fresh)
GROUP BY run_id, trace_id, rank, stage, device
UNION ALL
SELECT * FROM device_busy_for(run, skip := (SELECT fresh FROM _fresh));
