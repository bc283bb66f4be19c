-- comm_store_rows: compute _comm_parts_for($run) (communication,
-- computation and their overlap per trace, rank, stage and device) into
-- comm_overlap_store: what the step aggregates' save runs for runs whose
-- rows the overlap's sweep did not save for their current events
-- (aggregates.commUnswept), and the overlap's save when its Go sweep
-- cannot take a run (a group too large, or a key shared by two stages).
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
INSERT INTO comm_overlap_store
SELECT * FROM _comm_parts_for($run, runs := $runs)
