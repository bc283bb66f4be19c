-- 0021_finish_failures: a run whose saved copy could not be made is
-- remembered, so that its failure stays its own (issue 36 item A, issue
-- 38). Finish saves, per run, the per-kernel overlap, the step aggregates,
-- the fuse-pattern rows and the overlap-table rows; each works from what
-- the warehouse holds (a run without a current copy is pending), so before
-- this a run whose save failed (DuckDB out of memory, a value out of range)
-- stayed pending and every later ingest, of any run, ran its save again and
-- failed. Now each failure is recorded here; later finishes try the copy
-- again a bounded number of times (ingest.FinishAttempts in all), then
-- leave the run alone until one of its traces changes, and its readers
-- compute what the copy would have held (as for any run without a current
-- copy).

-- finish_failures: the last failure of each (run, copy) whose save ever
-- failed. store is the copy: 'overlap', 'steps', 'fuse patterns' or
-- 'overlap rows'; traces_at the newest ingested_at of the run's traces when
-- it failed (a trace ingested later makes the run pending again and the
-- count start over); attempts the failed saves of the copy for those
-- traces; error the last one's text. A row outlives a later successful
-- save (the copy's own record then says it is current): it is what
-- happened, not what is pending.
CREATE TABLE finish_failures (
    run_id    INTEGER NOT NULL,
    store     VARCHAR NOT NULL,
    traces_at TIMESTAMP NOT NULL,
    attempts  INTEGER NOT NULL,
    failed_at TIMESTAMP NOT NULL,
    error     VARCHAR NOT NULL,
    PRIMARY KEY (run_id, store)
);

COMMENT ON TABLE finish_failures IS 'Saved copies (overlap, steps, fuse patterns, overlap rows) whose save failed for a run: the last failure, its count for the run''s current traces; retried up to 3 times in all, then not until the run changes.';
COMMENT ON COLUMN finish_failures.run_id IS 'The run whose copy failed.';
COMMENT ON COLUMN finish_failures.store IS 'Which copy: overlap, steps, fuse patterns or overlap rows.';
COMMENT ON COLUMN finish_failures.traces_at IS 'Newest ingested_at of the run''s traces when it failed; a newer trace makes the copy pending again.';
COMMENT ON COLUMN finish_failures.attempts IS 'Failed saves of the copy for those traces.';
COMMENT ON COLUMN finish_failures.failed_at IS 'When the last save failed.';
COMMENT ON COLUMN finish_failures.error IS 'The last failure''s error text.';
