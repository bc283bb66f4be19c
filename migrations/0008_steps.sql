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

-- step_kernels_for(run, skip := false): one row per (trace, rank, stage,
-- step, name) of run `run`'s GPU events that belong to a step (nothing when
-- skip). Columns:
--   run_id, trace_id, rank, stage, step, name_id
--   launches              GPU events
--   dur_ns                summed dur_ns
--   hidden_ns             summed kernel_overlap hidden_ns (under another stream)
--   hidden_by_compute_ns  summed hidden_by_compute_ns
CREATE MACRO step_kernels_for(run, skip := false) AS TABLE
SELECT o.run_id, o.trace_id, o.rank, o.stage, k.step, o.name_id,
       count(*) AS launches,
       sum(o.dur_ns)::BIGINT AS dur_ns,
       sum(o.hidden_ns)::BIGINT AS hidden_ns,
       sum(o.hidden_by_compute_ns)::BIGINT AS hidden_by_compute_ns
FROM kernel_overlap_cached(run) o
JOIN kernels k USING (kernel_id)
WHERE k.run_id = run AND k.step IS NOT NULL AND NOT skip
GROUP BY o.run_id, o.trace_id, o.rank, o.stage, k.step, o.name_id;

-- step_totals_for(run, skip := false): one row per (trace, rank, stage,
-- step) of run `run` (nothing when skip).
-- Columns:
--   run_id, trace_id, rank, stage, step
--   kernels          GPU events
--   kernel_ns        summed dur_ns (overlapping events counted each)
--   busy_ns          GPU busy time: the union of the step's event intervals
--                    per device, summed over devices
--   first_ns         first start; last_end_ns: last end
--   window_ns        last_end_ns - first_ns: the step time (its GPU window)
--   exposed_comm_ns  communication time not hidden under compute: summed
--                    dur_ns - hidden_by_compute_ns of the step's
--                    communication-category events
-- So window_ns = busy_ns + idle and kernel_ns - busy_ns is the overlap.
CREATE MACRO step_totals_for(run, skip := false) AS TABLE
WITH _k AS (
    SELECT o.run_id, o.trace_id, o.rank, o.stage, k.step, o.device, o.kernel_id,
           o.ts_ns, o.ts_ns + o.dur_ns AS end_ns, o.dur_ns,
           CASE WHEN n.category = 'communication'
                THEN o.dur_ns - o.hidden_by_compute_ns ELSE 0 END AS exposed_ns
    FROM kernel_overlap_cached(run) o
    JOIN kernels k USING (kernel_id)
    JOIN kernel_names n ON n.name_id = o.name_id
    WHERE k.run_id = run AND k.step IS NOT NULL AND NOT skip
),
_u AS (
    SELECT *,
           max(end_ns) OVER (PARTITION BY trace_id, rank, stage, step, device
                             ORDER BY ts_ns, kernel_id
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prior_end_ns
    FROM _k
)
SELECT run_id, trace_id, rank, stage, step,
       count(*) AS kernels,
       sum(dur_ns)::BIGINT AS kernel_ns,
       -- each event adds the part of it after every earlier event's end
       sum(greatest(0, end_ns - greatest(ts_ns, coalesce(prior_end_ns, ts_ns))))::BIGINT AS busy_ns,
       min(ts_ns) AS first_ns,
       max(end_ns) AS last_end_ns,
       (max(end_ns) - min(ts_ns))::BIGINT AS window_ns,
       sum(exposed_ns)::BIGINT AS exposed_comm_ns
FROM _u
GROUP BY run_id, trace_id, rank, stage, step;

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

-- _steps_fingerprint(run): changes whenever the inputs of the run's step
-- aggregates change: what changes its overlap, or any event's step.
CREATE MACRO _steps_fingerprint(run) AS (
    SELECT hash(_overlap_fingerprint(run), count(*), bit_xor(hash(kernel_id, step)))
    FROM kernels
    WHERE run_id = run
);

-- step_kernels_cached(run): step_kernels_for(run), read from
-- step_kernel_store when the run's saved copy is current. Same columns.
CREATE MACRO step_kernels_cached(run) AS TABLE
WITH _fresh AS (
    SELECT count(*) > 0 AS fresh
    FROM step_store_runs
    WHERE run_id = run AND fingerprint = _steps_fingerprint(run)
)
SELECT s.* FROM step_kernel_store s
WHERE s.run_id = run AND (SELECT fresh FROM _fresh)
UNION ALL
SELECT * FROM step_kernels_for(run, skip := (SELECT fresh FROM _fresh));

-- step_totals_cached(run): step_totals_for(run), read from step_total_store
-- when the run's saved copy is current. Same columns.
CREATE MACRO step_totals_cached(run) AS TABLE
WITH _fresh AS (
    SELECT count(*) > 0 AS fresh
    FROM step_store_runs
    WHERE run_id = run AND fingerprint = _steps_fingerprint(run)
)
SELECT s.* FROM step_total_store s
WHERE s.run_id = run AND (SELECT fresh FROM _fresh)
UNION ALL
SELECT * FROM step_totals_for(run, skip := (SELECT fresh FROM _fresh));

COMMENT ON TABLE steps IS 'One row per step (forward iteration) of a trace, with its source, stage, batch size, tokens and windows.';
COMMENT ON COLUMN kernels.step IS 'The step (steps.step of the same trace) the event belongs to; NULL outside every step window.';
COMMENT ON TABLE step_kernel_store IS 'Saved per-step kernel aggregates of runs (read through the step_*_cached macros).';
COMMENT ON TABLE step_total_store IS 'Saved per-step totals of runs: kernel time, busy time, window, exposed communication.';
COMMENT ON TABLE step_store_runs IS 'Which runs have saved step aggregates, with the fingerprint they were computed for.';
