-- spread_store_rows: compute the duration spread per rank, stage and
-- kernel short name of run $run (_kernel_spread_for, by rank) into
-- kernel_spread_store.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
INSERT INTO kernel_spread_store
SELECT * FROM _kernel_spread_for($run, by_rank := true, runs := $runs)
