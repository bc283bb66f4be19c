-- overlap_store_rows: third step of saving a run's overlap: compute
-- kernel_overlap_for($run) (every rank and stage) into kernel_overlap_store.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (ingest.Finish).
INSERT INTO kernel_overlap_store
SELECT * FROM kernel_overlap_for($run, runs := $runs)
