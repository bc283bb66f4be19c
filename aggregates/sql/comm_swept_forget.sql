-- comm_swept_forget: forget that run $run's communication overlap rows
-- (comm_overlap_store) were swept with its per-kernel overlap
-- (comm_overlap_runs, migrations/0024_comm_swept.sql): first step of
-- saving its overlap, and of any save that writes those rows otherwise
-- (comm_store_rows.sql), so that the record never vouches for rows it did
-- not see written.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
DELETE FROM comm_overlap_runs WHERE CASE WHEN $runs IS NULL THEN run_id = $run ELSE _run_in(run_id, $runs) END
