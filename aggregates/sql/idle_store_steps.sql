-- idle_store_steps: compute _idle_steps_for($run) (busy and idle time by
-- cause per step, device and stream) into idle_step_store.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
INSERT INTO idle_step_store
SELECT * FROM _idle_steps_for($run, runs := $runs)
