-- fusion_ranks: the ranks of run $run with GPU events, whose fuse-pattern
-- rows ingest.SaveFusion saves.
-- Parameters: $run.
-- Columns: rank.
SELECT DISTINCT rank FROM kernels WHERE run_id = $run ORDER BY rank
