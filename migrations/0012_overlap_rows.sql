-- 0012_overlap_rows: saved overlap-opportunity rows, so that `triage RUN`
-- of one rank reads the table instead of computing it (issue 11: a 1
-- M-kernel triage in <= 0.5 s; queries/overlap_by_kernel.sql took about
-- 0.45 s of it on the saved per-kernel overlap). As for the fuse-pattern
-- rows (0011), target.Finish saves them once per rank and readers use the
-- copy while its fingerprint matches.
--
-- A saved row is a row of queries/overlap_by_kernel.sql for a single-trace
-- report of one rank ($mapping NULL) over every stage ($stage NULL) with no
-- share floor ($min_share 0), for the verdict floor recorded with the copy
-- ($min_dur_ns): a report of one stage, or with a floor, is those rows
-- filtered (every figure of a row is per stage, and the floor only hides
-- rows), and the per-stage row cap is applied after.
--
-- (Rewritten once after landing, when every macro and view moved into the
-- SQL library, sqllib/: its fingerprint macro _overlap_rows_fingerprint is
-- in sqllib/overlap.sql. A warehouse never runs an applied migration again,
-- and schema.Open creates the library in every warehouse.)

-- overlap_row_store: saved overlap_by_kernel.sql rows, per run and rank.
CREATE TABLE overlap_row_store (
    run_id               INTEGER NOT NULL,
    rank                 INTEGER NOT NULL,
    -- the columns of overlap_by_kernel.sql, same names and meaning
    stage                VARCHAR NOT NULL,
    priority             VARCHAR NOT NULL,
    verdict              VARCHAR NOT NULL,
    kernel               VARCHAR NOT NULL,
    family               VARCHAR NOT NULL,
    category             VARCHAR NOT NULL,
    scope                VARCHAR NOT NULL,
    scope_match          VARCHAR NOT NULL,
    launches             BIGINT NOT NULL,
    total_ns             BIGINT NOT NULL,
    hidden_ns            BIGINT NOT NULL,
    hidden_by_compute_ns BIGINT NOT NULL,
    exclusive_ns         BIGINT NOT NULL,
    busy_ns              BIGINT NOT NULL,
    busy_share_pct       DOUBLE NOT NULL,
    exclusive_pct        DOUBLE NOT NULL,
    hidden_pct           DOUBLE NOT NULL,
    dominant             VARCHAR,
    dep_risk             VARCHAR NOT NULL,
    recommendation       VARCHAR NOT NULL,
    longest_kernel_id    BIGINT NOT NULL,
    longest_trace_id     INTEGER NOT NULL,
    longest_ts_ns        BIGINT NOT NULL,
    longest_dur_ns       BIGINT NOT NULL,
    longest_device       INTEGER,
    longest_stream       BIGINT
);

-- overlap_row_runs: one row per (run, rank) whose saved rows are complete
-- (written last, deleted first), with the verdict floor they were computed
-- for. fingerprint = _overlap_rows_fingerprint(run).
CREATE TABLE overlap_row_runs (
    run_id      INTEGER NOT NULL,
    rank        INTEGER NOT NULL,
    min_dur_ns  BIGINT NOT NULL,
    fingerprint UBIGINT NOT NULL,
    stored_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (run_id, rank)
);

COMMENT ON TABLE overlap_row_store IS 'Saved overlap-opportunity rows (queries/overlap_by_kernel.sql, single-trace, every stage, no share floor) per run and rank.';
COMMENT ON TABLE overlap_row_runs IS 'Which (run, rank) have saved overlap-opportunity rows, with the verdict floor and the fingerprint they were computed for.';
