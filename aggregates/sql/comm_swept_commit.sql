-- comm_swept_commit: last step of saving the per-kernel overlap of run
-- $run (or of every run of $runs): record that its communication overlap
-- rows were swept with it, at the fingerprint its record just took
-- (kernel_overlap_runs, overlap_store_commit.sql), so that the fingerprint
-- is not computed twice.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once.
INSERT INTO comm_overlap_runs
SELECT run_id, fingerprint, stored_at
FROM kernel_overlap_runs
WHERE CASE WHEN $runs IS NULL THEN run_id = $run ELSE _run_in(run_id, $runs) END
