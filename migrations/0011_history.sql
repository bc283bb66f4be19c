-- 0011_history: saved fuse-pattern rows, so that `compare` reads
-- aggregates only (compare.md section 7: two runs of about 1 M kernels in
-- about 2 s). Matching a run's kernels against the fusion catalog walks
-- every stream of the run (about 3-4 CPU-seconds per million kernels);
-- compare needs the fuse-pattern rows of both runs (their status changes),
-- so ingest.Finish saves them once per rank, as it saves the overlap and
-- the step aggregates, and readers use the copy while its fingerprint
-- matches.
--
-- A saved row is a row of queries/fusion_matches.sql for a single-trace
-- report of one rank ($mapping NULL) over every stage ($stage NULL) with no
-- share floor ($min_share 0): a report of one stage, or with a floor, is
-- those rows filtered (chains, conflicts and shares are per stage, and the
-- floor is applied last).
--
-- (Rewritten once after landing, when every macro and view moved into the
-- SQL library, sqllib/: its fingerprint macro _fusion_fingerprint is in
-- sqllib/fusion.sql. A warehouse never runs an applied migration again, and
-- schema.Open creates the library in every warehouse.)

-- fusion_match_store: saved fusion_matches.sql rows, per run and rank.
CREATE TABLE fusion_match_store (
    run_id         INTEGER NOT NULL,
    rank           INTEGER NOT NULL,
    -- the columns of fusion_matches.sql, same names and meaning
    stage          VARCHAR NOT NULL,
    pattern        VARCHAR NOT NULL,
    id             VARCHAR NOT NULL,
    status         VARCHAR NOT NULL,
    confidence     VARCHAR NOT NULL,
    related_ns     BIGINT NOT NULL,
    share_pct      DOUBLE NOT NULL,
    occurrences    BIGINT NOT NULL,
    evidence       VARCHAR[] NOT NULL,
    evidence_share_pct DOUBLE[] NOT NULL,
    locations      VARCHAR[] NOT NULL,
    candidate_path VARCHAR NOT NULL,
    sources        VARCHAR[] NOT NULL,
    rationale      VARCHAR NOT NULL,
    switch         VARCHAR,
    origin         VARCHAR NOT NULL,
    framework      VARCHAR NOT NULL,
    priority       INTEGER NOT NULL,
    steps          INTEGER NOT NULL
);

-- fusion_store_runs: one row per (run, rank) whose saved rows are complete
-- (written last, deleted first). fingerprint = _fusion_fingerprint(run).
CREATE TABLE fusion_store_runs (
    run_id      INTEGER NOT NULL,
    rank        INTEGER NOT NULL,
    fingerprint UBIGINT NOT NULL,
    stored_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (run_id, rank)
);

COMMENT ON TABLE fusion_match_store IS 'Saved fuse-pattern rows (queries/fusion_matches.sql, single-trace, every stage, no share floor) per run and rank.';
COMMENT ON TABLE fusion_store_runs IS 'Which (run, rank) have saved fuse-pattern rows, with the fingerprint they were computed for.';
