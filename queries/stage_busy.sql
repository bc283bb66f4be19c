-- stage_busy: GPU time totals of the triage header, per stage and per
-- (stage, rank, trace, device).
--
-- One row per stage (level 'stage', rank/trace/device NULL) followed by one
-- row per device of that stage (level 'device'). Columns:
--   kernels    GPU events
--   kernel_ns  summed dur_ns (overlap counted as often as it happens)
--   busy_ns    GPU busy time: the union of the events' intervals of each
--              device, summed over devices (never a union across devices)
--   window_ns  last end minus first start
--   streams    distinct streams (summed over devices on the stage row)
-- Sorted by stage (prefill, decode, mixed, unknown, others by name), the
-- stage row first, then rank, trace, device.
--
-- Parameters: $run; $rank (NULL = every rank); $stage (NULL = every stage);
-- $overlap_fp: the run's overlap_fingerprint.sql, NULL to compute it here
-- (it says whether the busy rows ingest saved are current).
SELECT stage,
       CASE WHEN grouping(rank) = 1 THEN 'stage' ELSE 'device' END AS level,
       rank, trace_id, device,
       sum(kernels)::BIGINT AS kernels,
       sum(kernel_ns)::BIGINT AS kernel_ns,
       sum(busy_ns)::BIGINT AS busy_ns,
       (max(last_end_ns) - min(first_ns))::BIGINT AS window_ns,
       sum(streams)::BIGINT AS streams
FROM device_busy_cached($run, ofp := $overlap_fp)
WHERE ($rank IS NULL OR rank = $rank) AND ($stage IS NULL OR stage = $stage)
GROUP BY GROUPING SETS ((stage), (stage, rank, trace_id, device))
ORDER BY CASE stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                    WHEN 'unknown' THEN 3 ELSE 4 END,
         stage, grouping(rank) DESC, rank, trace_id, device NULLS LAST
