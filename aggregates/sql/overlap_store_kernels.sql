-- overlap_store_kernels: the GPU events of the overlap groups with keys in
-- [$lo, $hi] of the runs whose overlap is being saved, as
-- aggregates/overlap_sweep.go sweeps them: by group, then start, then id (the
-- order in which kernel_overlap_for numbers starts), with what its sweep
-- reads (migrations/0017_finish_batch.sql, _k). The group of each row
-- follows from overlap_store_groups.sql's counts.
-- Parameters: $lo, $hi, and $run, or with $runs (a list of run ids, $run
-- NULL) every run listed.
-- Columns: kernel_id, stream_key, ts_ns, dur_ns, comp.
SELECT k.kernel_id, coalesce(k.stream, -1) AS stream_key, k.ts_ns, k.dur_ns,
       coalesce(n.category = 'compute', false) AS comp
FROM kernels k
JOIN kernel_names n USING (name_id)
WHERE CASE WHEN $runs IS NULL THEN $run IS NULL OR k.run_id = $run ELSE list_contains($runs, k.run_id) END
  AND _overlap_group(k.trace_id, k.stage, k.device) BETWEEN $lo AND $hi
ORDER BY _overlap_group(k.trace_id, k.stage, k.device), k.ts_ns, k.kernel_id
