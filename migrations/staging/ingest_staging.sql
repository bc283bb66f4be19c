-- Per-connection TEMP tables ingest fills while it reads one trace. Derived
-- columns (launch, op, site, stage, depth) are joined in when the trace's rows
-- move to the warehouse tables inside the trace's transaction; the tables are
-- emptied after every trace. `ordinal` is the event's index in its file.

CREATE TEMP TABLE IF NOT EXISTS _stage_kernels (
    ordinal     BIGINT NOT NULL,
    name_id     INTEGER NOT NULL,
    kind        VARCHAR NOT NULL,
    ts_ns       BIGINT NOT NULL,
    dur_ns      BIGINT NOT NULL,
    device      INTEGER,
    stream      BIGINT,
    correlation BIGINT,
    external_id BIGINT,
    grid        VARCHAR,
    block       VARCHAR,
    bytes       BIGINT
);

CREATE TEMP TABLE IF NOT EXISTS _stage_launches (
    ordinal     BIGINT NOT NULL,
    name        VARCHAR NOT NULL,
    ts_ns       BIGINT NOT NULL,
    dur_ns      BIGINT NOT NULL,
    pid         BIGINT,
    tid         BIGINT,
    correlation BIGINT,
    external_id BIGINT,
    graph       BOOLEAN NOT NULL
);

CREATE TEMP TABLE IF NOT EXISTS _stage_cpu_ops (
    ordinal         BIGINT NOT NULL,
    name            VARCHAR NOT NULL,
    ts_ns           BIGINT NOT NULL,
    dur_ns          BIGINT NOT NULL,
    pid             BIGINT,
    tid             BIGINT,
    external_id     BIGINT,
    sequence_number BIGINT,
    input_dims      VARCHAR,
    input_types     VARCHAR
);

CREATE TEMP TABLE IF NOT EXISTS _stage_py_frames (
    ordinal   BIGINT NOT NULL,
    frame_id  BIGINT,
    parent_id BIGINT,
    site_id   INTEGER NOT NULL,
    ts_ns     BIGINT NOT NULL,
    dur_ns    BIGINT NOT NULL,
    pid       BIGINT,
    tid       BIGINT
);

-- What the per-thread sweep computed, keyed by ordinal:
-- kind 1 = launch site, 2 = cpu_op site, 3 = frame depth.
CREATE TEMP TABLE IF NOT EXISTS _stage_derived (
    kind    TINYINT NOT NULL,
    ordinal BIGINT NOT NULL,
    value   INTEGER NOT NULL
);
