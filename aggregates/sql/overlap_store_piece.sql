-- overlap_store_piece: overlap_store_kernels.sql's rows (same columns, same
-- order) for one piece of one group too large to hold whole, the group
-- named by what its key stands for (run $run, trace $trace, stage $stage,
-- device $device, NULL for none: overlap_store_groups.sql's single
-- groups) rather than by its key: the key is a hash of the stage and more,
-- which DuckDB then planned and computed for every event of the runs
-- (about half of each piece's statement on small runs), where these are
-- equalities on the stored columns that it pushes into the scan. The
-- events after ($ts, $id) up to ($to_ts, $to_id), as there.
SELECT k.kernel_id, coalesce(k.stream, -1) AS stream_key, k.ts_ns, k.dur_ns,
       coalesce(n.category = 'compute', false) AS comp,
       k.rank,
       CASE WHEN n.category = 'communication' THEN 1
            WHEN n.category NOT IN ('communication', 'memory') THEN 2
            ELSE 0 END::TINYINT AS comm_kind
FROM kernels k
JOIN kernel_names n USING (name_id)
WHERE k.run_id = $run AND k.trace_id = $trace AND k.stage = $stage
  AND k.device IS NOT DISTINCT FROM $device
  AND ($ts IS NULL OR k.ts_ns >= $ts)
  AND ($ts IS NULL OR k.ts_ns > $ts OR (k.ts_ns = $ts AND k.kernel_id > $id))
  AND ($to_ts IS NULL OR k.ts_ns <= $to_ts)
  AND ($to_ts IS NULL OR k.ts_ns < $to_ts OR (k.ts_ns = $to_ts AND k.kernel_id <= $to_id))
ORDER BY k.ts_ns, k.kernel_id
