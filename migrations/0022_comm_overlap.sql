-- 0022_comm_overlap: the saved copy of communication hidden under
-- computation (issue 37 item 4): per trace, rank, stage and device, the
-- union of communication time, of computation time and their overlap.
-- What it holds is defined by the SQL library's comm module
-- (sqllib/comm.sql: _comm_parts_for), which also reads it back
-- (comm_overlap); a triage read it by sweeping every GPU event of the run
-- (3.6 CPU-s on a 1 M-event run).

-- Saved with the step aggregates (aggregates.SaveSteps, in the same
-- transaction) and so current exactly when they are: step_store_runs
-- guards it (fingerprint = _steps_fingerprint(run)), as it guards the idle
-- rows of 0020.

-- comm_overlap_store: saved _comm_parts_for(run) rows, same columns.
CREATE TABLE comm_overlap_store (
    run_id     INTEGER NOT NULL,
    trace_id   INTEGER NOT NULL,
    rank       INTEGER NOT NULL,
    stage      VARCHAR NOT NULL,
    device     INTEGER,
    comm_ns    BIGINT NOT NULL,
    comp_ns    BIGINT NOT NULL,
    overlap_ns BIGINT NOT NULL
);

-- Every run's saved step aggregates are forgotten, so that the next
-- ingest (Finish) saves them again with this copy; until then reports
-- compute both.
DELETE FROM step_store_runs;

COMMENT ON TABLE comm_overlap_store IS 'Saved communication, computation and overlap time per trace, rank, stage and device (read through comm_overlap).';
