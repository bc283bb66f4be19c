-- 0001_warehouse: the warehouse tables users write SQL against.
--
-- All times are BIGINT nanoseconds (`*_ns`), absolute (baseTimeNanoseconds
-- applied, or epoch microseconds times 1000). Identifiers that name one event
-- (`kernel_id`, `launch_id`, `op_id`) are unique across the whole warehouse:
-- trace_id * 2^32 + the event's ordinal in its file, so a join never needs
-- trace_id to be correct.
--
-- (Rewritten once after landing, when every macro and view moved into the
-- SQL library, sqllib/: its views are in sqllib/events.sql. A warehouse
-- never runs an applied migration again, and schema.Open creates the
-- library in every warehouse.)

-- One row per profiling session of one deployment.
CREATE SEQUENCE run_id_seq START 1;
CREATE TABLE runs (
    run_id             INTEGER PRIMARY KEY,
    label              VARCHAR NOT NULL UNIQUE,
    source_dir         VARCHAR,
    -- sglang | vllm | trtllm | tokenspeed | unknown
    framework          VARCHAR NOT NULL DEFAULT 'unknown',
    -- why that framework was chosen (or why it stayed unknown)
    framework_evidence VARCHAR,
    model              VARCHAR,
    -- the whole server_args.json when one was found
    server_args        JSON,
    tp_size            INTEGER,
    dp_size            INTEGER,
    ep_size            INTEGER,
    pp_size            INTEGER,
    -- false when the server args disable CUDA graphs, NULL when unknown
    cuda_graph         BOOLEAN,
    ingested_at        TIMESTAMP NOT NULL,
    tags               MAP(VARCHAR, VARCHAR)
);

-- One row per trace file.
CREATE SEQUENCE trace_id_seq START 1;
CREATE TABLE traces (
    trace_id           INTEGER PRIMARY KEY,
    run_id             INTEGER NOT NULL,
    path               VARCHAR NOT NULL,
    -- xxh3-128 of the file's bytes: the idempotency key
    content_hash       VARCHAR NOT NULL UNIQUE,
    -- size on disk, and of the JSON after decompression
    bytes              BIGINT NOT NULL,
    json_bytes         BIGINT NOT NULL,
    compressed         BOOLEAN NOT NULL,
    rank               INTEGER NOT NULL,
    tp_rank            INTEGER,
    dp_rank            INTEGER,
    pp_rank            INTEGER,
    ep_rank            INTEGER,
    -- true when no name token or distributedInfo gave the rank (rank is 0)
    rank_assumed       BOOLEAN NOT NULL,
    -- prefill | decode | mixed | unknown (the file's stage; kernels carry their own)
    stage              VARCHAR NOT NULL,
    -- flag | filename | directory | annotations | none
    stage_source       VARCHAR NOT NULL,
    -- mapping | formal
    role               VARCHAR NOT NULL,
    role_source        VARCHAR NOT NULL,
    -- a merged-* file holding several ranks (kernels.rank then follows the pid)
    merged             BOOLEAN NOT NULL,
    framework          VARCHAR NOT NULL,
    framework_evidence VARCHAR,
    device_name        VARCHAR,
    device_properties  JSON,
    distributed_info   JSON,
    schema_version     VARCHAR,
    trace_name         VARCHAR,
    base_time_ns       BIGINT,
    -- first start and last end over the stored events
    start_ns           BIGINT,
    end_ns             BIGINT,
    -- event counts per kind, as read from the file
    events             BIGINT NOT NULL,
    kernel_events      BIGINT NOT NULL,
    memcpy_events      BIGINT NOT NULL,
    memset_events      BIGINT NOT NULL,
    launch_events      BIGINT NOT NULL,
    graph_launches     BIGINT NOT NULL,
    cpu_op_events      BIGINT NOT NULL,
    py_frame_events    BIGINT NOT NULL,
    annotation_events  BIGINT NOT NULL,
    flow_events        BIGINT NOT NULL,
    counter_events     BIGINT NOT NULL,
    instant_events     BIGINT NOT NULL,
    metadata_events    BIGINT NOT NULL,
    other_events       BIGINT NOT NULL,
    -- events with cosmetic problems (kept or skipped, never fatal) and why
    warnings           BIGINT NOT NULL,
    warning_notes      VARCHAR[],
    ingested_at        TIMESTAMP NOT NULL,
    ingest_ms          BIGINT
);

-- One row per distinct GPU event name (kernels, memcpy, memset).
CREATE SEQUENCE name_id_seq START 1;
CREATE TABLE kernel_names (
    name_id    INTEGER PRIMARY KEY,
    -- the name exactly as the trace wrote it
    name       VARCHAR NOT NULL UNIQUE,
    -- Itanium-demangled form, NULL when the name is not mangled
    demangled  VARCHAR,
    -- the report's row key (triage.md section 3)
    short_name VARCHAR NOT NULL,
    -- short_name with every template argument list <...> removed (two-trace matching)
    base_name  VARCHAR NOT NULL,
    -- set by the classifier (migrations 0002+); NULL until classified
    family     VARCHAR,
    category   VARCHAR
);

-- One row per distinct Python frame name (`python_function` event name).
-- kernels.site_id points here; py_frames uses it to avoid storing strings.
CREATE SEQUENCE site_id_seq START 1;
CREATE TABLE sites (
    site_id    INTEGER PRIMARY KEY,
    name       VARCHAR NOT NULL UNIQUE,
    -- parsed from `path/to/file.py(123): func`; NULL for `nn.Module: X`, built-ins
    file       VARCHAR,
    line       INTEGER,
    func       VARCHAR,
    -- `func @ path:line` with the path trimmed to the framework-relative part
    display    VARCHAR NOT NULL,
    -- path trimmed to python/sglang/..., vllm/..., tensorrt_llm/..., tokenspeed/...
    rel_path   VARCHAR,
    -- whose code: sglang | vllm | trtllm | tokenspeed | torch | python | other
    framework  VARCHAR NOT NULL,
    -- module __call__, _call_impl, runners, threading, ...: never a launch site
    is_wrapper BOOLEAN NOT NULL
);

-- One row per GPU event: kernel, memcpy or memset.
CREATE TABLE kernels (
    kernel_id    BIGINT NOT NULL,
    trace_id     INTEGER NOT NULL,
    run_id       INTEGER NOT NULL,
    rank         INTEGER NOT NULL,
    -- per-kernel stage: annotation window, else launching annotation, else the trace's
    stage        VARCHAR NOT NULL,
    name_id      INTEGER NOT NULL,
    -- kernel | memcpy | memset
    kind         VARCHAR NOT NULL,
    ts_ns        BIGINT NOT NULL,
    dur_ns       BIGINT NOT NULL,
    device       INTEGER,
    stream       BIGINT,
    correlation  BIGINT,
    external_id  BIGINT,
    -- `[x,y,z]` as written
    grid         VARCHAR,
    block        VARCHAR,
    -- memcpy / memset size
    bytes        BIGINT,
    -- launched by cudaGraphLaunch / hipGraphLaunch (a CUDA-graph replay)
    graph_launch BOOLEAN NOT NULL,
    launch_id    BIGINT,
    op_id        BIGINT,
    site_id      INTEGER,
    -- place of the event on its (trace, device, stream), from 1, in start
    -- order (ties by kernel_id): "the next kernel on the stream" is +1
    stream_pos   BIGINT
);

-- One row per CUDA/HIP runtime or driver call.
CREATE TABLE launches (
    launch_id   BIGINT NOT NULL,
    trace_id    INTEGER NOT NULL,
    name        VARCHAR NOT NULL,
    ts_ns       BIGINT NOT NULL,
    dur_ns      BIGINT NOT NULL,
    pid         BIGINT,
    tid         BIGINT,
    correlation BIGINT,
    external_id BIGINT,
    -- innermost serving-framework Python frame on the thread at ts_ns
    site_id     INTEGER
);

-- One row per `cpu_op` event.
CREATE TABLE cpu_ops (
    op_id           BIGINT NOT NULL,
    trace_id        INTEGER NOT NULL,
    name            VARCHAR NOT NULL,
    ts_ns           BIGINT NOT NULL,
    dur_ns          BIGINT NOT NULL,
    pid             BIGINT,
    tid             BIGINT,
    external_id     BIGINT,
    sequence_number BIGINT,
    -- `Input Dims` / `Input type` as JSON text (record_shapes only)
    input_dims      VARCHAR,
    input_types     VARCHAR,
    site_id         INTEGER
);

-- One row per `python_function` event; names live in `sites` (see the py_frames view).
CREATE TABLE py_frame_events (
    trace_id  INTEGER NOT NULL,
    -- the event's index in its trace file (with trace_id, the row's key)
    ordinal   BIGINT NOT NULL,
    -- `Python id` and `Python parent id`
    frame_id  BIGINT,
    parent_id BIGINT,
    site_id   INTEGER NOT NULL,
    ts_ns     BIGINT NOT NULL,
    dur_ns    BIGINT NOT NULL,
    pid       BIGINT,
    tid       BIGINT,
    -- nesting depth on its thread, 0 = outermost
    depth     INTEGER NOT NULL
);

-- One row per user_annotation / gpu_user_annotation (and ProfilerStep) event.
CREATE TABLE annotations (
    trace_id INTEGER NOT NULL,
    name     VARCHAR NOT NULL,
    cat      VARCHAR NOT NULL,
    ts_ns    BIGINT NOT NULL,
    dur_ns   BIGINT NOT NULL,
    pid      BIGINT,
    tid      BIGINT,
    -- prefill | decode | mixed when the name says so, else NULL
    stage    VARCHAR
);
