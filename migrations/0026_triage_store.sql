-- 0026_triage_store: one saved triage report per run (issue 38: `triage
-- RUN` <= 0.15 s with 1,000 runs stored). A triage computed its report in
-- about 25 statements over the SQL library's macros, 0.2 s of CPU even
-- with every other saved copy current (binding and planning the macros,
-- not reading rows). What it shows with the default sections (every stage,
-- the run's default rank, --min-share 1, --overlap-rows 10, no timelines,
-- the traces' own frameworks) is now saved when the run is finished
-- (target.Finish, after aggregates.Finish) and read back in one statement
-- while it is current: its record holds the run's _triage_fingerprint
-- (sqllib/triage.sql: what the other copies' fingerprints cover, the
-- run's and its traces' rows, its kernels' names) and the recipe of the
-- binary that saved it (queries.TriageRecipe: the report's queries, the
-- SQL library and the encoding of their rows). Any other triage, and this
-- one when the record is stale or missing, is computed as before.

-- triage_store: the rows of one saved triage report, a row per section
-- (a field of queries.TriageData) holding that section's rows as a JSON
-- array.
CREATE TABLE triage_store (
    run_id  INTEGER NOT NULL,
    rank    INTEGER NOT NULL,
    section VARCHAR NOT NULL,
    rows    VARCHAR NOT NULL
);

-- triage_store_runs: one row per run with a saved triage report (written
-- in the rows' transaction, deleted first).
CREATE TABLE triage_store_runs (
    run_id       INTEGER PRIMARY KEY,
    rank         INTEGER NOT NULL,
    min_share    DOUBLE NOT NULL,
    overlap_rows INTEGER NOT NULL,
    recipe       VARCHAR NOT NULL,
    fingerprint  UBIGINT NOT NULL,
    stored_at    TIMESTAMP NOT NULL
);

COMMENT ON TABLE triage_store IS 'A saved triage report of a run (its default rank and sections), one row per section, read by triage_saved() while triage_store_runs says it is current.';
COMMENT ON TABLE triage_store_runs IS 'Runs with a saved triage report (triage_store): for which rank, sections and recipe, at which _triage_fingerprint.';
