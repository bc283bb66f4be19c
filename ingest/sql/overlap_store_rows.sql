-- overlap_store_rows: third step of saving a run's overlap: compute
-- kernel_overlap_for($run) (every rank and stage) into kernel_overlap_store.
-- Parameters: $run.
INSERT INTO kernel_overlap_store
SELECT * FROM kernel_overlap_for($run)
