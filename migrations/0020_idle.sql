-- 0020_idle: the saved copies of "where the GPU waits" (issue 37): per
-- step, device and stream, busy time and idle time by cause, and each
-- trace, rank and stage's longest gaps. What they hold is defined by the
-- SQL library's idle module (sqllib/idle.sql: _idle_steps_for,
-- _idle_worst_gaps_for), which also reads them back.

-- Saved copies, written with the step aggregates (ingest.SaveSteps, in the
-- same transaction) and so current exactly when they are: step_store_runs
-- guards both (fingerprint = _steps_fingerprint(run)).

-- idle_step_store: saved _idle_steps_for(run) rows (launch_gap_ns =
-- _idle_default_gap()), same columns.
CREATE TABLE idle_step_store (
    run_id            INTEGER NOT NULL,
    trace_id          INTEGER NOT NULL,
    rank              INTEGER NOT NULL,
    stage             VARCHAR NOT NULL,
    step              INTEGER NOT NULL,
    device            INTEGER,
    scope             VARCHAR NOT NULL,
    stream            BIGINT,
    events            BIGINT NOT NULL,
    first_ns          BIGINT NOT NULL,
    last_end_ns       BIGINT NOT NULL,
    window_ns         BIGINT NOT NULL,
    busy_ns           BIGINT NOT NULL,
    idle_ns           BIGINT NOT NULL,
    gaps              BIGINT NOT NULL,
    host_bound_ns     BIGINT NOT NULL,
    launch_latency_ns BIGINT NOT NULL,
    sync_ns           BIGINT NOT NULL,
    graph_internal_ns BIGINT NOT NULL,
    other_ns          BIGINT NOT NULL
);

-- idle_gap_store: saved _idle_worst_gaps_for(run) rows, same columns.
CREATE TABLE idle_gap_store (
    run_id         INTEGER NOT NULL,
    trace_id       INTEGER NOT NULL,
    rank           INTEGER NOT NULL,
    stage          VARCHAR NOT NULL,
    step           INTEGER NOT NULL,
    device         INTEGER,
    kernel_id      BIGINT NOT NULL,
    prev_kernel_id BIGINT NOT NULL,
    gap_start_ns   BIGINT NOT NULL,
    gap_ns         BIGINT NOT NULL,
    cause          VARCHAR NOT NULL,
    launch_id      BIGINT,
    launch_ts_ns   BIGINT,
    next_name_id   INTEGER NOT NULL,
    prev_name_id   INTEGER NOT NULL,
    site_id        INTEGER
);

-- Every run's saved step aggregates are forgotten, so that the next
-- ingest (Finish) saves them again with their idle rows; until then
-- reports compute both.
DELETE FROM step_store_runs;

COMMENT ON TABLE idle_step_store IS 'Saved busy and idle time by cause per step, device and stream (read through idle_steps).';
COMMENT ON TABLE idle_gap_store IS 'Saved longest GPU gaps per trace, rank and stage, with cause and the events around them.';
