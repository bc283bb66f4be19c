-- 0008_steps: steps, the unit `compare` and `history` measure (compare.md
-- section 1), and the per-step aggregates they read instead of events.
--
-- A step is one forward iteration of the server. Ingest finds a trace's
-- step windows (ingest/sql/insert_steps.sql), strongest evidence first:
--   step_annotation  SGLang step[EXTEND bs=.. toks=..] / step[DECODE bs=..]
--   vllm_execute     execute_<n>_context_<c>(<t>)_generation_<g>(<t>)
--   profiler_step    ProfilerStep#N
--   gpu_annotation   a gpu_user_annotation name that repeats (the one whose
--                    windows cover the most time)
--   kernel           --steps-by KERNEL_PATTERN: a kernel that runs once per
--                    step; a step ends where one of its launches ends
--   window           no step evidence: the whole trace is one step (0)
-- and assigns each GPU event to one (kernels.step, ingest/sql/link_steps.sql):
-- the step whose GPU window contains its start, else the step whose CPU
-- window contains its launch (same thread); events in neither have no step.
-- The aggregates themselves are computed by sqllib/steps.sql.
--
-- (Rewritten once after landing, when every macro and view moved into the
-- SQL library, sqllib/: its macros are in sqllib/steps.sql. A warehouse
-- never runs an applied migration again, and schema.Open creates the
-- library in every warehouse.)

-- kernels.step: the step (steps.step of the same trace) the event belongs
-- to; NULL when it falls outside every step window.
ALTER TABLE kernels ADD COLUMN step INTEGER;

-- One row per step of a trace.
CREATE TABLE steps (
    trace_id   INTEGER NOT NULL,
    -- 1, 2, ... in start order within the trace; 0 = the whole trace
    -- (source 'window')
    step       INTEGER NOT NULL,
    -- step_annotation | vllm_execute | profiler_step | gpu_annotation |
    -- kernel | window (see above)
    source     VARCHAR NOT NULL,
    -- the annotation's name; for source 'kernel' the pattern
    name       VARCHAR NOT NULL,
    -- prefill | decode | mixed when the name says so, else NULL
    stage      VARCHAR,
    -- sequences in the batch and tokens of the step, when the name says so
    -- (SGLang bs= / toks= or tokens=; vLLM context + generation)
    batch_size INTEGER,
    tokens     INTEGER,
    -- the CPU annotation's window (NULL when the step has none)
    cpu_ts_ns  BIGINT,
    cpu_end_ns BIGINT,
    -- the GPU annotation's window, over every device (NULL when none)
    gpu_ts_ns  BIGINT,
    gpu_end_ns BIGINT,
    -- the first or last step of a trace with more than four steps: cut by
    -- the profiler's start and stop, left out unless --keep-edges
    edge       BOOLEAN NOT NULL
);

-- Saved step aggregates (ingest.SaveSteps after ingest), read back by the
-- *_cached macros while the run's fingerprint matches, as with the overlap.

-- step_kernel_store: saved step_kernels_for(run) rows, same columns.
CREATE TABLE step_kernel_store (
    run_id               INTEGER NOT NULL,
    trace_id             INTEGER NOT NULL,
    rank                 INTEGER NOT NULL,
    stage                VARCHAR NOT NULL,
    step                 INTEGER NOT NULL,
    name_id              INTEGER NOT NULL,
    launches             BIGINT NOT NULL,
    dur_ns               BIGINT NOT NULL,
    hidden_ns            BIGINT NOT NULL,
    hidden_by_compute_ns BIGINT NOT NULL
);

-- step_total_store: saved step_totals_for(run) rows, same columns.
CREATE TABLE step_total_store (
    run_id          INTEGER NOT NULL,
    trace_id        INTEGER NOT NULL,
    rank            INTEGER NOT NULL,
    stage           VARCHAR NOT NULL,
    step            INTEGER NOT NULL,
    kernels         BIGINT NOT NULL,
    kernel_ns       BIGINT NOT NULL,
    busy_ns         BIGINT NOT NULL,
    first_ns        BIGINT NOT NULL,
    last_end_ns     BIGINT NOT NULL,
    window_ns       BIGINT NOT NULL,
    exposed_comm_ns BIGINT NOT NULL
);

-- step_store_runs: one row per run whose saved step aggregates are complete
-- (written last, deleted first). fingerprint = _steps_fingerprint(run).
CREATE TABLE step_store_runs (
    run_id      INTEGER PRIMARY KEY,
    fingerprint UBIGINT NOT NULL,
    stored_at   TIMESTAMP NOT NULL
);

COMMENT ON TABLE steps IS 'One row per step (forward iteration) of a trace, with its source, stage, batch size, tokens and windows.';
COMMENT ON COLUMN kernels.step IS 'The step (steps.step of the same trace) the event belongs to; NULL outside every step window.';
COMMENT ON TABLE step_kernel_store IS 'Saved per-step kernel aggregates of runs (read through the step_*_cached macros).';
COMMENT ON TABLE step_total_store IS 'Saved per-step totals of runs: kernel time, busy time, window, exposed communication.';
COMMENT ON TABLE step_store_runs IS 'Which runs have saved step aggregates, with the fingerprint they were computed for.';
