-- launch_store_stages: compute the launch overhead per rank and stage of
-- run $run (_launch_stages_for, by rank) into launch_stage_store.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
INSERT INTO launch_stage_store
SELECT * FROM _launch_stages_for($run, by_rank := true, runs := $runs)
