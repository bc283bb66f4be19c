-- 0025_uncompressed_run_strings: the string columns of four small tables
-- that every ingest appends to are stored uncompressed (issue 38: ingest of
-- run 1,001 into a warehouse of 1,000 runs against an empty one).
--
-- DuckDB rewrites a table's last row group whole at the checkpoint that
-- follows an append: a table with an index (runs, traces) appends into that
-- row group, which holds every run until 122,880 rows; one without (the
-- saved stores) gets a new row group, which the checkpoint merges back into
-- the one before while together they hold under 2,048 rows. Either way, a
-- table of a few rows per run was read, analysed and compressed again at
-- every ingest, and its strings went through DICT_FSST, whose symbol-table
-- build is the dear part. Counted by callgrind, the checkpoint after one
-- more row in a copy of a 1,000-run warehouse took (above a checkpoint of
-- nothing) runs 81.5 M instructions, traces 42.1 M, fusion_match_store
-- 23.6 M, idle_gap_store 12.7 M; with these columns uncompressed 10.2,
-- 20.2, 4.6 and 3.3 M. The whole ingest's checkpoint was 285 M against
-- 121 M into a new warehouse. These tables hold a few kB per run (most of
-- it runs.server_args and traces' JSON), and a scan of uncompressed strings
-- decodes nothing. The other saved stores' cost is in their numbers, not
-- their strings, and is left as it was.
--
-- DuckDB has no ALTER for a column's compression, so each table is made
-- again with the same columns, constraints, defaults and comments, and its
-- rows copied. (COPY FROM DATABASE, which schema.Compact uses, keeps a
-- column's compression.)

CREATE TABLE runs_0025 (
    run_id               INTEGER PRIMARY KEY,
    "label"              VARCHAR USING COMPRESSION uncompressed NOT NULL UNIQUE,
    source_dir           VARCHAR USING COMPRESSION uncompressed,
    framework            VARCHAR USING COMPRESSION uncompressed NOT NULL DEFAULT 'unknown',
    framework_evidence   VARCHAR USING COMPRESSION uncompressed,
    model                VARCHAR USING COMPRESSION uncompressed,
    server_args          JSON USING COMPRESSION uncompressed,
    tp_size              INTEGER,
    dp_size              INTEGER,
    ep_size              INTEGER,
    pp_size              INTEGER,
    cuda_graph           BOOLEAN,
    ingested_at          TIMESTAMP NOT NULL,
    tags                 MAP(VARCHAR, VARCHAR)
);
INSERT INTO runs_0025 SELECT * FROM runs;
DROP TABLE runs;
ALTER TABLE runs_0025 RENAME TO runs;
COMMENT ON TABLE runs IS 'One row per profiling session of one deployment.';
COMMENT ON COLUMN runs.run_id IS 'The run''s id (from run_id_seq, 1, 2, ...); every other table''s run_id points here.';
COMMENT ON COLUMN runs."label" IS 'The run''s name (--run, else derived from the directory).';
COMMENT ON COLUMN runs.source_dir IS 'The run''s directory as an absolute path: where its files were found (with --run, the root given; a capture, its own directory).';
COMMENT ON COLUMN runs.framework IS 'sglang | vllm | trtllm | tokenspeed | unknown';
COMMENT ON COLUMN runs.framework_evidence IS 'Why that framework was chosen (or why it stayed unknown).';
COMMENT ON COLUMN runs.model IS 'The model, from server_args.json (model_path, else model, else served_model_name); NULL when no server args name one.';
COMMENT ON COLUMN runs.server_args IS 'The whole server_args.json when one was found.';
COMMENT ON COLUMN runs.tp_size IS 'Tensor-parallel size: server_args.json''s tp_size or tensor_parallel_size, else (no server args) the largest traces.tp_rank + 1; NULL when neither says.';
COMMENT ON COLUMN runs.dp_size IS 'Data-parallel size: server_args.json''s dp_size or data_parallel_size, else (no server args) the largest traces.dp_rank + 1; NULL when neither says.';
COMMENT ON COLUMN runs.ep_size IS 'Expert-parallel size: server_args.json''s ep_size, expert_parallel_size or moe_ep_size, else (no server args) the largest traces.ep_rank + 1; NULL when neither says.';
COMMENT ON COLUMN runs.pp_size IS 'Pipeline-parallel size: server_args.json''s pp_size or pipeline_parallel_size, else (no server args) the largest traces.pp_rank + 1; NULL when neither says.';
COMMENT ON COLUMN runs.cuda_graph IS 'False when the server args disable CUDA graphs, NULL when unknown.';
COMMENT ON COLUMN runs.ingested_at IS 'When a trace of the run was last stored (local time of the ingesting process), plus the run''s place in its batch in µs, so that runs stored together keep their order.';
COMMENT ON COLUMN runs.tags IS 'Free key=value tags given at ingest or capture.';

CREATE TABLE traces_0025 (
    trace_id             INTEGER PRIMARY KEY,
    run_id               INTEGER NOT NULL,
    path                 VARCHAR USING COMPRESSION uncompressed NOT NULL,
    content_hash         VARCHAR USING COMPRESSION uncompressed NOT NULL UNIQUE,
    bytes                BIGINT NOT NULL,
    json_bytes           BIGINT NOT NULL,
    compressed           BOOLEAN NOT NULL,
    rank                 INTEGER NOT NULL,
    tp_rank              INTEGER,
    dp_rank              INTEGER,
    pp_rank              INTEGER,
    ep_rank              INTEGER,
    rank_assumed         BOOLEAN NOT NULL,
    stage                VARCHAR USING COMPRESSION uncompressed NOT NULL,
    stage_source         VARCHAR USING COMPRESSION uncompressed NOT NULL,
    "role"               VARCHAR USING COMPRESSION uncompressed NOT NULL,
    role_source          VARCHAR USING COMPRESSION uncompressed NOT NULL,
    merged               BOOLEAN NOT NULL,
    framework            VARCHAR USING COMPRESSION uncompressed NOT NULL,
    framework_evidence   VARCHAR USING COMPRESSION uncompressed,
    device_name          VARCHAR USING COMPRESSION uncompressed,
    device_properties    JSON USING COMPRESSION uncompressed,
    distributed_info     JSON USING COMPRESSION uncompressed,
    schema_version       VARCHAR USING COMPRESSION uncompressed,
    trace_name           VARCHAR USING COMPRESSION uncompressed,
    base_time_ns         BIGINT,
    start_ns             BIGINT,
    end_ns               BIGINT,
    events               BIGINT NOT NULL,
    kernel_events        BIGINT NOT NULL,
    memcpy_events        BIGINT NOT NULL,
    memset_events        BIGINT NOT NULL,
    launch_events        BIGINT NOT NULL,
    graph_launches       BIGINT NOT NULL,
    cpu_op_events        BIGINT NOT NULL,
    py_frame_events      BIGINT NOT NULL,
    annotation_events    BIGINT NOT NULL,
    flow_events          BIGINT NOT NULL,
    counter_events       BIGINT NOT NULL,
    instant_events       BIGINT NOT NULL,
    metadata_events      BIGINT NOT NULL,
    other_events         BIGINT NOT NULL,
    warnings             BIGINT NOT NULL,
    warning_notes        VARCHAR[] USING COMPRESSION uncompressed,
    ingested_at          TIMESTAMP NOT NULL,
    ingest_ms            BIGINT,
    source_format        VARCHAR USING COMPRESSION uncompressed DEFAULT 'kineto'
);
INSERT INTO traces_0025 SELECT * FROM traces;
DROP TABLE traces;
ALTER TABLE traces_0025 RENAME TO traces;
COMMENT ON TABLE traces IS 'One row per ingested trace file.';
COMMENT ON COLUMN traces.trace_id IS 'The trace file''s id (from trace_id_seq); the high half of every kernel_id, launch_id and op_id of the file.';
COMMENT ON COLUMN traces.run_id IS 'The run the file belongs to (runs.run_id).';
COMMENT ON COLUMN traces.path IS 'The file''s path as ingest found it (relative when the argument given to ingest was).';
COMMENT ON COLUMN traces.content_hash IS 'xxh3-128 of the file''s bytes: the idempotency key.';
COMMENT ON COLUMN traces.bytes IS 'Size on disk.';
COMMENT ON COLUMN traces.json_bytes IS 'Size of the JSON after decompression; for nsys traces, of the SQLite export read.';
COMMENT ON COLUMN traces.compressed IS 'True when the file was gzip-compressed (.gz).';
COMMENT ON COLUMN traces.rank IS 'The global rank of the file: from a file-name token, else distributedInfo, else 0 (rank_assumed). For a merged file, its kernels carry their own rank (kernels.rank).';
COMMENT ON COLUMN traces.tp_rank IS 'Tensor-parallel rank, when the file name (TP-<n>, tp<n>) or distributedInfo gives it; else NULL.';
COMMENT ON COLUMN traces.dp_rank IS 'Data-parallel rank, when the file name (DP-<n>, dp<n>) or distributedInfo gives it; else NULL.';
COMMENT ON COLUMN traces.pp_rank IS 'Pipeline-parallel rank, when the file name (PP-<n>, pp<n>) or distributedInfo gives it; else NULL.';
COMMENT ON COLUMN traces.ep_rank IS 'Expert-parallel rank, when the file name (EP-<n>, ep<n>) or distributedInfo gives it; else NULL.';
COMMENT ON COLUMN traces.rank_assumed IS 'True when no file-name token, distributedInfo or (nsys) single GPU gave the rank (rank is then 0).';
COMMENT ON COLUMN traces.stage IS 'The file''s stage: prefill | decode | mixed | unknown (kernels carry their own).';
COMMENT ON COLUMN traces.stage_source IS 'What gave the file''s stage: flag (--stage) | filename | directory | annotations (the kernels'' annotations) | none.';
COMMENT ON COLUMN traces."role" IS 'Two-trace role: mapping (CUDA graphs off, lends Python scopes) | formal (the timing run).';
COMMENT ON COLUMN traces.role_source IS 'What gave the role: flag (--role) | server_args.json (its CUDA-graph setting) | default (formal).';
COMMENT ON COLUMN traces.merged IS 'A merged-* file holding several ranks, or an nsys export with several GPUs and no rank in its name (kernels.rank then follows the pid, or the device).';
COMMENT ON COLUMN traces.framework IS 'The serving framework detected for this file: sglang | vllm | trtllm | tokenspeed | unknown.';
COMMENT ON COLUMN traces.framework_evidence IS 'Why that framework was chosen for the file (or why it stayed unknown); NULL when nothing was recorded.';
COMMENT ON COLUMN traces.device_name IS 'The GPU''s name (Kineto deviceProperties[0].name; nsys TARGET_INFO_GPU); NULL when the file has none.';
COMMENT ON COLUMN traces.device_properties IS 'The file''s deviceProperties array as JSON (nsys: the GPUs of TARGET_INFO_GPU); NULL when absent.';
COMMENT ON COLUMN traces.distributed_info IS 'The file''s distributedInfo object as JSON (rank, world size, backend); NULL when absent.';
COMMENT ON COLUMN traces.schema_version IS 'Kineto''s schemaVersion (nsys: the export''s schema version); NULL when absent.';
COMMENT ON COLUMN traces.trace_name IS 'Kineto''s traceName; NULL when absent and for nsys exports.';
COMMENT ON COLUMN traces.base_time_ns IS 'baseTimeNanoseconds of the file (nsys: the session start), already added to every stored time, ns; NULL when the file had none (its times were taken as epoch µs).';
COMMENT ON COLUMN traces.start_ns IS 'First start over the stored events (ns).';
COMMENT ON COLUMN traces.end_ns IS 'Last end over the stored events (ns).';
COMMENT ON COLUMN traces.events IS 'Events read from the file, of every kind: the per-kind counts below add up to it.';
COMMENT ON COLUMN traces.kernel_events IS 'GPU kernel events in the file.';
COMMENT ON COLUMN traces.memcpy_events IS 'GPU memcpy events in the file.';
COMMENT ON COLUMN traces.memset_events IS 'GPU memset events in the file.';
COMMENT ON COLUMN traces.launch_events IS 'CUDA/HIP runtime and driver call events in the file (cuda_runtime, cuda_driver).';
COMMENT ON COLUMN traces.graph_launches IS 'Graph launch calls (cudaGraphLaunch, hipGraphLaunch) among the launch events.';
COMMENT ON COLUMN traces.cpu_op_events IS 'cpu_op events in the file.';
COMMENT ON COLUMN traces.py_frame_events IS 'python_function events in the file.';
COMMENT ON COLUMN traces.annotation_events IS 'user_annotation and gpu_user_annotation events in the file.';
COMMENT ON COLUMN traces.flow_events IS 'Flow events (ph s, t, f) in the file: counted, not stored.';
COMMENT ON COLUMN traces.counter_events IS 'Counter events (ph C) in the file: counted, not stored.';
COMMENT ON COLUMN traces.instant_events IS 'Instant events (ph i, I) in the file: counted, not stored.';
COMMENT ON COLUMN traces.metadata_events IS 'Metadata events (ph M: process and thread names) in the file; 0 for nsys exports.';
COMMENT ON COLUMN traces.other_events IS 'Events of any other phase (B/E, async, object), without ph or with an unknown one: counted, not stored.';
COMMENT ON COLUMN traces.warnings IS 'Events with cosmetic problems (kept or skipped, never fatal).';
COMMENT ON COLUMN traces.warning_notes IS 'The warnings, one line each (kept or skipped event and why); NULL when there were none.';
COMMENT ON COLUMN traces.ingested_at IS 'When the file was stored (local time of the ingesting process).';
COMMENT ON COLUMN traces.ingest_ms IS 'Milliseconds the file''s ingest took (read, store and link), measured by the ingesting process.';
COMMENT ON COLUMN traces.source_format IS 'kineto (torch.profiler Chrome trace JSON) | nsys (Nsight Systems SQLite export, or .nsys-rep exported through nsys).';

CREATE TABLE fusion_match_store_0025 (
    run_id               INTEGER NOT NULL,
    rank                 INTEGER NOT NULL,
    stage                VARCHAR USING COMPRESSION uncompressed NOT NULL,
    pattern              VARCHAR USING COMPRESSION uncompressed NOT NULL,
    id                   VARCHAR USING COMPRESSION uncompressed NOT NULL,
    status               VARCHAR USING COMPRESSION uncompressed NOT NULL,
    confidence           VARCHAR USING COMPRESSION uncompressed NOT NULL,
    related_ns           BIGINT NOT NULL,
    share_pct            DOUBLE NOT NULL,
    occurrences          BIGINT NOT NULL,
    evidence             VARCHAR[] USING COMPRESSION uncompressed NOT NULL,
    evidence_share_pct   DOUBLE[] NOT NULL,
    locations            VARCHAR[] USING COMPRESSION uncompressed NOT NULL,
    candidate_path       VARCHAR USING COMPRESSION uncompressed NOT NULL,
    sources              VARCHAR[] USING COMPRESSION uncompressed NOT NULL,
    rationale            VARCHAR USING COMPRESSION uncompressed NOT NULL,
    switch               VARCHAR USING COMPRESSION uncompressed,
    origin               VARCHAR USING COMPRESSION uncompressed NOT NULL,
    framework            VARCHAR USING COMPRESSION uncompressed NOT NULL,
    priority             INTEGER NOT NULL,
    steps                INTEGER NOT NULL
);
INSERT INTO fusion_match_store_0025 SELECT * FROM fusion_match_store;
DROP TABLE fusion_match_store;
ALTER TABLE fusion_match_store_0025 RENAME TO fusion_match_store;
COMMENT ON TABLE fusion_match_store IS 'Saved fuse-pattern rows (queries/fusion_matches.sql, single-trace, every stage, no share floor) per run and rank.';
COMMENT ON COLUMN fusion_match_store.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN fusion_match_store.rank IS 'The rank the rows were computed for, as a single-trace report of that rank alone.';
COMMENT ON COLUMN fusion_match_store.stage IS 'The per-kernel stage of the row.';
COMMENT ON COLUMN fusion_match_store.pattern IS 'The fusion entry''s name (fusion_catalog.name).';
COMMENT ON COLUMN fusion_match_store.id IS 'The fusion entry (fusion_catalog.id).';
COMMENT ON COLUMN fusion_match_store.status IS 'opportunity (split chain on a trace of the entry''s own framework) | elsewhere (split chain another framework fuses) | already fused (a fused kernel runs).';
COMMENT ON COLUMN fusion_match_store.confidence IS 'confirmed (share_pct >= likely_share, or 4 or more occurrences) | candidate.';
COMMENT ON COLUMN fusion_match_store.related_ns IS 'Summed duration of the related kernels (the accepted chain occurrences, or the fused kernels), ns.';
COMMENT ON COLUMN fusion_match_store.share_pct IS 'related_ns as a percent (0-100) of the summed duration of every GPU event of the stage.';
COMMENT ON COLUMN fusion_match_store.occurrences IS 'Chain occurrences, or fused kernels.';
COMMENT ON COLUMN fusion_match_store.evidence IS 'The related kernels'' short names, in chain-step order (stream order for unordered entries), then by time.';
COMMENT ON COLUMN fusion_match_store.evidence_share_pct IS 'Each evidence kernel''s related time as a percent (0-100) of the stage''s summed kernel time, same order.';
COMMENT ON COLUMN fusion_match_store.locations IS 'The evidence kernels'' Python sites (display form), same order; kernels without a site are left out.';
COMMENT ON COLUMN fusion_match_store.candidate_path IS '<framework>: <first source>, where the fused path lives.';
COMMENT ON COLUMN fusion_match_store.sources IS 'The entry''s sources (fusion_catalog.sources).';
COMMENT ON COLUMN fusion_match_store.rationale IS 'The entry''s rationale (fusion_catalog.rationale).';
COMMENT ON COLUMN fusion_match_store.switch IS 'The entry''s switch (fusion_catalog.switch); NULL when unknown.';
COMMENT ON COLUMN fusion_match_store.origin IS 'The entry''s origin: mainline | upstream | inflight.';
COMMENT ON COLUMN fusion_match_store.framework IS 'The entry''s framework (fusion_catalog.framework).';
COMMENT ON COLUMN fusion_match_store.priority IS 'The entry''s priority (fusion_catalog.priority).';
COMMENT ON COLUMN fusion_match_store.steps IS 'The entry''s chain length (fusion_catalog.steps).';

CREATE TABLE idle_gap_store_0025 (
    run_id           INTEGER NOT NULL,
    trace_id         INTEGER NOT NULL,
    rank             INTEGER NOT NULL,
    stage            VARCHAR USING COMPRESSION uncompressed NOT NULL,
    step             INTEGER NOT NULL,
    device           INTEGER,
    kernel_id        BIGINT NOT NULL,
    prev_kernel_id   BIGINT NOT NULL,
    gap_start_ns     BIGINT NOT NULL,
    gap_ns           BIGINT NOT NULL,
    cause            VARCHAR USING COMPRESSION uncompressed NOT NULL,
    launch_id        BIGINT,
    launch_ts_ns     BIGINT,
    next_name_id     INTEGER NOT NULL,
    prev_name_id     INTEGER NOT NULL,
    site_id          INTEGER
);
INSERT INTO idle_gap_store_0025 SELECT * FROM idle_gap_store;
DROP TABLE idle_gap_store;
ALTER TABLE idle_gap_store_0025 RENAME TO idle_gap_store;
COMMENT ON TABLE idle_gap_store IS 'Saved longest GPU gaps per trace, rank and stage, with cause and the events around them.';
COMMENT ON COLUMN idle_gap_store.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN idle_gap_store.trace_id IS 'The trace file (traces.trace_id).';
COMMENT ON COLUMN idle_gap_store.rank IS 'The rank (kernels.rank).';
COMMENT ON COLUMN idle_gap_store.stage IS 'The per-kernel stage (kernels.stage).';
COMMENT ON COLUMN idle_gap_store.step IS 'The step the gap is in (steps.step; edge steps left out).';
COMMENT ON COLUMN idle_gap_store.device IS 'The device; NULL for events whose file gives none.';
COMMENT ON COLUMN idle_gap_store.kernel_id IS 'The event the gap ends at (next).';
COMMENT ON COLUMN idle_gap_store.prev_kernel_id IS 'The event whose end began the gap (prev: the latest end before it; ties by the higher kernel_id).';
COMMENT ON COLUMN idle_gap_store.gap_start_ns IS 'The gap''s start (prev''s end), absolute ns.';
COMMENT ON COLUMN idle_gap_store.gap_ns IS 'The gap''s length (next''s start - gap_start_ns), ns, > 0.';
COMMENT ON COLUMN idle_gap_store.cause IS 'graph_internal | sync | host_bound | launch_latency | other.';
COMMENT ON COLUMN idle_gap_store.launch_id IS 'next''s launch (launches.launch_id); NULL when it has none.';
COMMENT ON COLUMN idle_gap_store.launch_ts_ns IS 'The start of that launch, absolute ns; NULL when there is none.';
COMMENT ON COLUMN idle_gap_store.next_name_id IS 'next''s name (kernel_names.name_id).';
COMMENT ON COLUMN idle_gap_store.prev_name_id IS 'prev''s name (kernel_names.name_id).';
COMMENT ON COLUMN idle_gap_store.site_id IS 'next''s Python site (its own, else its launch''s): for a host-bound gap, where the late launch came from; NULL when none.';

