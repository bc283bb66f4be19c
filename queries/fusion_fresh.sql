-- fusion_fresh: whether run $run's rank $rank has saved fuse-pattern rows
-- (fusion_match_store, written by aggregates.SaveFusion) that are current: the
-- fingerprint recorded with them is the run's now (_fusion_fingerprint:
-- its kernels, the installed catalog, its model, TP size and traces).
--
-- Parameters: $run, $rank; $overlap_fp: the run's overlap_fingerprint.sql,
-- NULL to compute it here.
--
-- Columns: fresh. One row.
SELECT coalesce((SELECT fingerprint = _fusion_fingerprint($run, ofp := $overlap_fp)
                 FROM fusion_store_runs
                 WHERE run_id = $run AND rank = $rank), false) AS fresh
