-- fusion_fresh: whether run $run's rank $rank has saved fuse-pattern rows
-- (fusion_match_store, written by aggregates.SaveFusion) that are current,
-- as the SQL library defines it for every reader (_fusion_current,
-- sqllib/fusion.sql).
--
-- Parameters: $run, $rank; $overlap_fp: the run's overlap_fingerprint.sql,
-- NULL to compute it here.
--
-- Columns: fresh. One row.
SELECT _fusion_current($run, $rank, ofp := $overlap_fp) AS fresh
