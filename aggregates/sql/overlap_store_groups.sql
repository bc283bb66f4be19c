-- overlap_store_groups: the overlap groups (_overlap_group: trace, stage,
-- device) of the runs whose overlap is being saved, in key order, with
-- their GPU events, so that aggregates/overlap_sweep.go reads them in ranges.
-- The events are kernel_overlap_for's (those with a kernel_names row).
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed.
-- Columns: group_key, kernels.
SELECT _overlap_group(k.trace_id, k.stage, k.device) AS group_key, count(*) AS kernels
FROM kernels k
JOIN kernel_names n USING (name_id)
WHERE CASE WHEN $runs IS NULL THEN $run IS NULL OR k.run_id = $run ELSE list_contains($runs, k.run_id) END
GROUP BY group_key
ORDER BY group_key
