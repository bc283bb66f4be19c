-- 0024_comm_swept: which runs' communication overlap copy (0022,
-- comm_overlap_store) was swept with their per-kernel overlap (issue 38).
-- Saving the copy with the step aggregates by the SQL library's sweep
-- (_comm_parts_for) cost about 4 CPU-s per 1 M GPU events; the Go sweep
-- that saves the per-kernel overlap (aggregates.SaveOverlap) already walks
-- the same events in time order, so it now saves these rows too, in the
-- overlap's transaction, and records the run here.
--
-- Readers are unchanged: the copy is read while the step aggregates'
-- record (step_store_runs) is current. This record only tells the step
-- aggregates' save (aggregates.SaveSteps) that the rows it finds are those
-- of the run's current events, so it keeps them instead of computing them
-- again: fingerprint = _overlap_fingerprint(run) when they were swept,
-- which changes with every input of comm_overlap (the events' times,
-- devices, stages, ranks, names and their categories). A run without a
-- current record has its rows computed by the SQL library, as before.

-- comm_overlap_runs: one row per run whose comm_overlap_store rows were
-- saved with its per-kernel overlap (written last, deleted first).
CREATE TABLE comm_overlap_runs (
    run_id      INTEGER PRIMARY KEY,
    fingerprint UBIGINT NOT NULL,
    stored_at   TIMESTAMP NOT NULL
);

COMMENT ON TABLE comm_overlap_runs IS 'Runs whose saved communication overlap (comm_overlap_store) was swept with their per-kernel overlap, and at which _overlap_fingerprint.';
