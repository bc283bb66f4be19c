-- overlap_store_macro: third step of saving a run's overlap when one of
-- its overlap groups is too large to sweep in Go (aggregates/overlap_sweep.go,
-- sweepGroupLimit): kernel_overlap_for($run) (every rank and stage) into
-- kernel_overlap_store, computed by DuckDB, which spills.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
INSERT INTO kernel_overlap_store
SELECT * FROM kernel_overlap_for($run, runs := $runs)
