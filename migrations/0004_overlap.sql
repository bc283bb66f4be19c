-- 0004_overlap: the saved per-kernel overlap of runs.
--
-- triage.md section 4 defines the figures; sqllib/overlap.sql computes
-- them (kernel_overlap_for: about 2 CPU-seconds per million kernels, too
-- much to repeat on every triage of a large run). A run's result is saved
-- once (ingest.SaveOverlap, after ingest) and read back by
-- kernel_overlap_cached, which falls back to computing when the saved copy
-- is missing or no longer matches the run.
--
-- (Rewritten once after landing, when every macro and view moved into the
-- SQL library, sqllib/; the overlap and scope macros and the kernel_overlap
-- view it made are in sqllib/overlap.sql and sqllib/scope.sql. A warehouse
-- never runs an applied migration again, and schema.Open creates the
-- library in every warehouse.)

-- kernel_overlap_store: saved kernel_overlap_for(run) rows, same columns.
CREATE TABLE kernel_overlap_store (
    kernel_id            BIGINT NOT NULL,
    trace_id             INTEGER NOT NULL,
    run_id               INTEGER NOT NULL,
    rank                 INTEGER NOT NULL,
    stage                VARCHAR NOT NULL,
    device               INTEGER,
    stream               BIGINT,
    name_id              INTEGER NOT NULL,
    ts_ns                BIGINT NOT NULL,
    dur_ns               BIGINT NOT NULL,
    hidden_ns            BIGINT NOT NULL,
    hidden_by_compute_ns BIGINT NOT NULL,
    exclusive_ns         BIGINT NOT NULL,
    start_rank           BIGINT NOT NULL,
    starts_before_end    BIGINT NOT NULL,
    union_share_ns       BIGINT NOT NULL,
    prev_kernel_id       BIGINT,
    next_kernel_id       BIGINT
);

-- kernel_overlap_runs: one row per run whose rows are in kernel_overlap_store
-- and complete (written last, deleted first, so a half-written copy is never
-- read). fingerprint = _overlap_fingerprint(run) when they were saved.
CREATE TABLE kernel_overlap_runs (
    run_id      INTEGER PRIMARY KEY,
    fingerprint UBIGINT NOT NULL,
    stored_at   TIMESTAMP NOT NULL
);
