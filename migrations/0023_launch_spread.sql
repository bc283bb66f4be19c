-- 0023_launch_spread: the saved copies of launch overhead and kernel
-- duration spread (issue 37 items 2 and 3), per rank: what a triage of one
-- rank shows (and of every rank when the run has one). What they hold is
-- defined by the SQL library (sqllib/launch.sql: _launch_kernels_for,
-- _launch_stages_for; sqllib/spread.sql: _kernel_spread_for), which also
-- reads them back; a triage computed them from every GPU event of the run
-- and its launches (about 0.8 CPU-s on a 1 M-event run).

-- Saved with the step aggregates (aggregates.SaveSteps, in the same
-- transaction) and so current exactly when they are: step_store_runs
-- guards them (fingerprint = _steps_fingerprint(run)), as it guards the
-- idle rows of 0020. Their short_ns is the library's default (10 us).

-- launch_kernel_store: saved _launch_kernels_for(run, by_rank := true)
-- rows, same columns.
CREATE TABLE launch_kernel_store (
    run_id        INTEGER NOT NULL,
    rank          INTEGER NOT NULL,
    stage         VARCHAR NOT NULL,
    short_name    VARCHAR NOT NULL,
    events        BIGINT NOT NULL,
    launched      BIGINT NOT NULL,
    delay_p50_ns  DOUBLE,
    delay_p90_ns  DOUBLE,
    delay_max_ns  BIGINT,
    launch_p50_ns DOUBLE,
    launch_max_ns BIGINT,
    launch_bound  BIGINT NOT NULL,
    short         BIGINT NOT NULL
);

-- launch_stage_store: saved _launch_stages_for(run, by_rank := true)
-- rows, same columns.
CREATE TABLE launch_stage_store (
    run_id           INTEGER NOT NULL,
    rank             INTEGER NOT NULL,
    stage            VARCHAR NOT NULL,
    events           BIGINT NOT NULL,
    launched         BIGINT NOT NULL,
    short            BIGINT NOT NULL,
    short_pct        DOUBLE NOT NULL,
    launch_bound     BIGINT NOT NULL,
    launch_bound_pct DOUBLE,
    delay_p50_ns     DOUBLE,
    delay_p90_ns     DOUBLE,
    delay_max_ns     BIGINT,
    launch_p50_ns    DOUBLE,
    launch_max_ns    BIGINT,
    short_ns         BIGINT NOT NULL
);

-- kernel_spread_store: saved _kernel_spread_for(run, by_rank := true)
-- rows, same columns.
CREATE TABLE kernel_spread_store (
    run_id     INTEGER NOT NULL,
    rank       INTEGER NOT NULL,
    stage      VARCHAR NOT NULL,
    short_name VARCHAR NOT NULL,
    events     BIGINT NOT NULL,
    min_ns     BIGINT NOT NULL,
    p50_ns     DOUBLE NOT NULL,
    p90_ns     DOUBLE NOT NULL,
    max_ns     BIGINT NOT NULL,
    stddev_ns  DOUBLE
);

-- Every run's saved step aggregates are forgotten, so that the next
-- ingest (Finish) saves them again with these copies; until then reports
-- compute them.
DELETE FROM step_store_runs;

COMMENT ON TABLE launch_kernel_store IS 'Saved launch overhead per rank, stage and kernel short name (read through launch_kernels).';
COMMENT ON TABLE launch_stage_store IS 'Saved launch overhead per rank and stage (read through launch_stages).';
COMMENT ON TABLE kernel_spread_store IS 'Saved duration spread per rank, stage and kernel short name (read through kernel_spread).';
