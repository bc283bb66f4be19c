-- overlap_store_kernels: the GPU events of the overlap groups with keys in
-- [$lo, $hi] of the runs whose overlap is being saved, as
-- aggregates/overlap_sweep.go sweeps them: by group, then start, then id (the
-- order in which kernel_overlap_for numbers starts), with what its sweep
-- reads (migrations/0017_finish_batch.sql, _k) and what the communication
-- overlap's reads (sqllib/comm.sql, _comm_parts_for: the rank, and the
-- category as comm_kind: 1 communication, 2 computation, i.e. any other
-- category but memory, 0 neither). The group of each row follows from
-- overlap_store_groups.sql's counts. A group too large to hold whole
-- (sweepGroupLimit) is read a piece at a time: $lo = $hi its key, the
-- events after ($ts, $id) up to ($to_ts, $to_id) in start and id order
-- (overlap_store_bounds.sql's; $to_ts and $to_id NULL: to the group's
-- end; $ts, $id, $to_ts and $to_id NULL: every event of the groups). Each
-- bound is also given on the start alone, which DuckDB pushes into the
-- scan (zone maps), so a piece reads little more than its own row groups
-- where the kernels are stored about in start order.
-- Parameters: $lo, $hi, $ts, $id, $to_ts, $to_id, and $run, or with $runs
-- (a list of run ids, $run NULL) every run listed.
-- Columns: kernel_id, stream_key, ts_ns, dur_ns, comp, rank, comm_kind.
SELECT k.kernel_id, coalesce(k.stream, -1) AS stream_key, k.ts_ns, k.dur_ns,
       coalesce(n.category = 'compute', false) AS comp,
       k.rank,
       CASE WHEN n.category = 'communication' THEN 1
            WHEN n.category NOT IN ('communication', 'memory') THEN 2
            ELSE 0 END::TINYINT AS comm_kind
FROM kernels k
JOIN kernel_names n USING (name_id)
WHERE CASE WHEN $runs IS NULL THEN $run IS NULL OR k.run_id = $run ELSE _run_in(k.run_id, $runs) END
  AND _overlap_group(k.trace_id, k.stage, k.device) BETWEEN $lo AND $hi
  AND ($ts IS NULL OR k.ts_ns >= $ts)
  AND ($ts IS NULL OR k.ts_ns > $ts OR (k.ts_ns = $ts AND k.kernel_id > $id))
  AND ($to_ts IS NULL OR k.ts_ns <= $to_ts)
  AND ($to_ts IS NULL OR k.ts_ns < $to_ts OR (k.ts_ns = $to_ts AND k.kernel_id <= $to_id))
ORDER BY _overlap_group(k.trace_id, k.stage, k.device), k.ts_ns, k.kernel_id
