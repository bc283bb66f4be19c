-- 0003_catalog: the fusion and overlap catalog (spec/catalog.md), as tables
-- the fuse-pattern and overlap reports join against.
--
-- The rows come from a catalog file (the embedded catalog/catalog.yaml, or a
-- user's --catalog FILE), written by catalog.Install, which replaces all three
-- tables' contents in one transaction whenever the catalog's content hash
-- differs from the stored one. Users read these tables; they do not edit
-- them (the next Install would overwrite their edits).
--
-- Keywords are stored as written. Matching is case-insensitive substring on
-- a kernel's short name, its site and its CPU op, and also on the letters-
-- and-digits-only form of both sides:
--   regexp_replace(lower(x), '[^a-z0-9]', '', 'g')
--
-- (Rewritten once after landing, when every macro and view moved into the
-- SQL library, sqllib/: its view catalog_keywords is in sqllib/catalog.sql.
-- A warehouse never runs an applied migration again, and schema.Open
-- creates the library in every warehouse.)

-- One row per fusion pattern: a split kernel chain with a known fused path.
CREATE TABLE fusion_catalog (
    -- stable slug, e.g. sglang-flashinfer-allreduce-fusion
    id              VARCHAR PRIMARY KEY,
    -- position in the catalog file, 0-based: the file's order, for stable output
    ordinal         INTEGER NOT NULL,
    -- display name
    name            VARCHAR NOT NULL,
    -- where the fused path lives: sglang | vllm | trtllm | tokenspeed | flashinfer
    framework       VARCHAR NOT NULL,
    -- mainline | upstream | inflight (an open PR, cited in sources)
    origin          VARCHAR NOT NULL,
    -- a kernel matching one of these keywords means the fused path runs
    fused           VARCHAR[] NOT NULL,
    -- number of chain steps in fusion_catalog_steps; 0 = no split chain known,
    -- so the entry can only be reported as already fused or elsewhere
    steps           INTEGER NOT NULL,
    -- steps must appear in step_no order on the stream
    ordered         BOOLEAN NOT NULL,
    -- largest idle gap between consecutive steps on one stream (the file's
    -- max_gap_us times 1000, comparable with kernels.ts_ns)
    max_gap_ns      BIGINT NOT NULL,
    -- how many unrelated kernels may sit between two consecutive steps
    max_between     INTEGER NOT NULL,
    -- model-path tokens: the entry applies only if one matches (empty = any model)
    models_any      VARCHAR[] NOT NULL,
    -- model-path tokens: the entry never applies if one matches
    models_none     VARCHAR[] NOT NULL,
    -- smallest tensor-parallel size the entry applies to
    min_tp          INTEGER NOT NULL,
    -- % of stage kernel time: below min_share a match is dropped, at or above
    -- likely_share it is confirmed
    min_share       DOUBLE NOT NULL,
    likely_share    DOUBLE NOT NULL,
    -- conflict resolution: higher priority wins
    priority        INTEGER NOT NULL,
    -- ids of fusion entries this one hides when it is kept
    subsumes        VARCHAR[] NOT NULL,
    -- file paths and "PR #N" references where the fused path lives
    sources         VARCHAR[] NOT NULL,
    -- server flag, env var or config key that turns the path on; NULL when unknown
    switch          VARCHAR,
    -- one sentence on what fusing saves
    rationale       VARCHAR NOT NULL,
    -- format version of the catalog file the rows came from
    catalog_version INTEGER NOT NULL,
    -- sha256 of the catalog's content: Install rewrites the tables when it differs
    catalog_hash    VARCHAR NOT NULL
);

-- One row per step of a fusion's unfused chain, so matching can join kernels
-- to steps in SQL.
CREATE TABLE fusion_catalog_steps (
    -- fusion_catalog.id
    id       VARCHAR NOT NULL,
    -- 1-based position in the chain
    step_no  INTEGER NOT NULL,
    -- alternatives: a kernel matching any one of them can fill this step
    keywords VARCHAR[] NOT NULL,
    PRIMARY KEY (id, step_no)
);

-- One row per known overlap path (multi-stream or launch overlap).
CREATE TABLE overlap_catalog (
    -- stable slug, e.g. sglang-single-batch-overlap
    id              VARCHAR PRIMARY KEY,
    -- position in the catalog file, 0-based
    ordinal         INTEGER NOT NULL,
    -- display name, shown as "Known path: <name> (<framework>, <origin>)"
    name            VARCHAR NOT NULL,
    -- sglang | vllm | trtllm | tokenspeed | flashinfer
    framework       VARCHAR NOT NULL,
    -- mainline | upstream | inflight
    origin          VARCHAR NOT NULL,
    -- kernel names or sites seen in the overlap window
    keywords        VARCHAR[] NOT NULL,
    -- file paths and "PR #N" references where the overlap path lives
    sources         VARCHAR[] NOT NULL,
    -- server flag, env var or config key that turns the path on; NULL when unknown
    switch          VARCHAR,
    -- one sentence on what overlapping saves
    rationale       VARCHAR NOT NULL,
    -- as in fusion_catalog
    catalog_version INTEGER NOT NULL,
    catalog_hash    VARCHAR NOT NULL
);
