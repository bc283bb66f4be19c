-- 0017_finish_batch: the saved per-kernel overlap and step aggregates of
-- many runs in one statement each (as 0015 did for the fuse-pattern rows):
-- ingest.Finish ran six statements per run for each, about 55 ms a run on
-- a small one, most of it planning. Each macro below is its earlier self
-- (0004, 0008, 0013) with `runs :=`, a list of run ids: given, it covers
-- every run listed (kernel_overlap_for's start ranks are then numbered
-- across them, still consecutive within each group), and the step macros
-- read those runs' saved per-kernel overlap, which the caller checks is
-- current (ingest/sql/overlap_store_current.sql). Without it nothing
-- changes.

CREATE OR REPLACE MACRO kernel_overlap_for(run, rank := NULL, stage := NULL, skip := false, runs := NULL) AS TABLE
WITH _k AS (
    SELECT k.kernel_id, _overlap_group(k.trace_id, k.stage, k.device) AS group_key,
           coalesce(k.stream, -1) AS stream_key,
           k.ts_ns, k.dur_ns,
           coalesce(n.category = 'compute', false)::INTEGER AS comp
    FROM kernels k
    JOIN kernel_names n USING (name_id)
    WHERE CASE WHEN runs IS NULL THEN run IS NULL OR k.run_id = run ELSE list_contains(runs, k.run_id) END
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

-- _device_busy_saved(run, runs := NULL): as in 0013, or the runs listed.
CREATE OR REPLACE MACRO _device_busy_saved(run, runs := NULL) AS TABLE
SELECT run_id, trace_id, rank, stage, device,
       count(*) AS kernels,
       sum(dur_ns)::BIGINT AS kernel_ns,
       sum(union_share_ns)::BIGINT AS busy_ns,
       min(ts_ns) AS first_ns,
       max(ts_ns + dur_ns) AS last_end_ns,
       count(DISTINCT coalesce(stream, -1)) AS streams
FROM kernel_overlap_store
WHERE CASE WHEN runs IS NULL THEN run IS NULL OR run_id = run ELSE list_contains(runs, run_id) END
GROUP BY run_id, trace_id, rank, stage, device;

-- step_kernels_for(run, skip := false, runs := NULL): as in 0008, or the
-- runs listed (from their saved overlap).
CREATE OR REPLACE MACRO step_kernels_for(run, skip := false, runs := NULL) AS TABLE
SELECT o.run_id, o.trace_id, o.rank, o.stage, k.step, o.name_id,
       count(*) AS launches,
       sum(o.dur_ns)::BIGINT AS dur_ns,
       sum(o.hidden_ns)::BIGINT AS hidden_ns,
       sum(o.hidden_by_compute_ns)::BIGINT AS hidden_by_compute_ns
FROM (SELECT * FROM kernel_overlap_cached(run) WHERE runs IS NULL
          UNION ALL
          SELECT * FROM kernel_overlap_store WHERE list_contains(runs, run_id)) o
JOIN kernels k USING (kernel_id)
WHERE CASE WHEN runs IS NULL THEN k.run_id = run ELSE list_contains(runs, k.run_id) END
      AND k.step IS NOT NULL AND NOT skip
GROUP BY o.run_id, o.trace_id, o.rank, o.stage, k.step, o.name_id;

-- step_totals_for(run, skip := false, runs := NULL): as in 0008, or the
-- runs listed (from their saved overlap).
CREATE OR REPLACE MACRO step_totals_for(run, skip := false, runs := NULL) AS TABLE
WITH _k AS (
    SELECT o.run_id, o.trace_id, o.rank, o.stage, k.step, o.device, o.kernel_id,
           o.ts_ns, o.ts_ns + o.dur_ns AS end_ns, o.dur_ns,
           CASE WHEN n.category = 'communication'
                THEN o.dur_ns - o.hidden_by_compute_ns ELSE 0 END AS exposed_ns
    FROM (SELECT * FROM kernel_overlap_cached(run) WHERE runs IS NULL
          UNION ALL
          SELECT * FROM kernel_overlap_store WHERE list_contains(runs, run_id)) o
    JOIN kernels k USING (kernel_id)
    JOIN kernel_names n ON n.name_id = o.name_id
    WHERE CASE WHEN runs IS NULL THEN k.run_id = run ELSE list_contains(runs, k.run_id) END
      AND k.step IS NOT NULL AND NOT skip
),
_u AS (
    SELECT *,
           max(end_ns) OVER (PARTITION BY trace_id, rank, stage, step, device
                             ORDER BY ts_ns, kernel_id
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prior_end_ns
    FROM _k
)
SELECT run_id, trace_id, rank, stage, step,
       count(*) AS kernels,
       sum(dur_ns)::BIGINT AS kernel_ns,
       -- each event adds the part of it after every earlier event's end
       sum(greatest(0, end_ns - greatest(ts_ns, coalesce(prior_end_ns, ts_ns))))::BIGINT AS busy_ns,
       min(ts_ns) AS first_ns,
       max(end_ns) AS last_end_ns,
       (max(end_ns) - min(ts_ns))::BIGINT AS window_ns,
       sum(exposed_ns)::BIGINT AS exposed_comm_ns
FROM _u
GROUP BY run_id, trace_id, rank, stage, step;
