-- comm_store_rows: compute _comm_parts_for($run) (communication,
-- computation and their overlap per trace, rank, stage and device) into
-- comm_overlap_store.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
INSERT INTO comm_overlap_store
SELECT * FROM _comm_parts_for($run, runs := $runs)
