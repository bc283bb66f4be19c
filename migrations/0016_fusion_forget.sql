-- 0016_fusion_forget: a fuse-pattern copy saved before 0015 may differ from
-- what _fusion_related computes now where two chain occurrences tie up to
-- their third kernel (0015 hashes their stream positions, not the batch's
-- stream numbering, for that last tie-break), so every copy's record is
-- forgotten, as in 0014: reports compute live until the next `ingest`,
-- `triage PATH` or `capture` saves the run again (fusion_pending.sql finds
-- runs without a record). The saved rows stay until that save replaces
-- them.
DELETE FROM fusion_store_runs;
