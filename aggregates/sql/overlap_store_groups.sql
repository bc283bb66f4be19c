-- overlap_store_groups: the overlap groups (_overlap_group: trace, stage,
-- device) of the runs whose overlap is being saved, in key order, with
-- their GPU events, so that aggregates/overlap_sweep.go reads them in ranges;
-- and what a group's communication overlap rows (comm_overlap_store) are
-- keyed by besides the rank, which single says is one value per key (false
-- only when two stage labels or device ids share a key: the sweep then
-- leaves those rows to the SQL library).
-- The events are kernel_overlap_for's (those with a kernel_names row).
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed.
-- Columns: group_key, kernels, run_id, trace_id, stage, device, single.
SELECT _overlap_group(k.trace_id, k.stage, k.device) AS group_key, count(*) AS kernels,
       min(k.run_id) AS run_id, min(k.trace_id) AS trace_id, min(k.stage) AS stage, min(k.device) AS device,
       min(k.run_id) = max(k.run_id) AND min(k.trace_id) = max(k.trace_id) AND min(k.stage) = max(k.stage)
           AND (bool_and(k.device IS NULL) OR (NOT bool_or(k.device IS NULL) AND min(k.device) = max(k.device))) AS single
FROM kernels k
JOIN kernel_names n USING (name_id)
WHERE CASE WHEN $runs IS NULL THEN $run IS NULL OR k.run_id = $run ELSE _run_in(k.run_id, $runs) END
GROUP BY group_key
ORDER BY group_key
