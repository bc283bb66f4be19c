-- run_ranks: the ranks with GPU events of the runs in $runs, and their
-- kernel counts: the (run, rank) pairs whose fuse-pattern and overlap rows
-- aggregates.SaveFusion and SaveOverlapRows save, and how big each is.
-- Parameters: $runs (a list of run ids).
-- Columns: run_id, rank, kernels.
SELECT run_id, rank, count(*) AS kernels
FROM kernels
WHERE _run_in(run_id, $runs)
GROUP BY run_id, rank
ORDER BY run_id, rank
