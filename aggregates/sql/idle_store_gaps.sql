-- idle_store_gaps: compute _idle_worst_gaps_for($run) (the longest gaps
-- of each trace, rank and stage) into idle_gap_store.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
INSERT INTO idle_gap_store
SELECT * FROM _idle_worst_gaps_for($run, runs := $runs)
