-- overlap_fresh: whether run $run's saved overlap (kernel_overlap_store,
-- and the busy time summed from it, device_busy_store) is current, as the
-- SQL library defines it for every reader of that copy (_overlap_current,
-- sqllib/overlap.sql): what StageBusyParams.Saved wants.
--
-- Parameters: $run; $overlap_fp: the run's overlap_fingerprint.sql, NULL
-- to compute it here.
--
-- Columns: fresh (false when nothing is saved or the copy is stale).
SELECT _overlap_current($run, ofp := $overlap_fp) AS fresh
