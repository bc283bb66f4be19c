-- Per-connection TEMP table for what ingest computes after a trace's events
-- are appended (it needs every event of the file): the Python site of each
-- launch and cpu_op. Rows are
-- joined into the warehouse tables inside the trace's transaction and the
-- table is emptied after every trace.
CREATE TEMP TABLE IF NOT EXISTS _derived (
    -- 1 = launch site, 2 = cpu_op site
    kind    TINYINT NOT NULL,
    -- the event's index in its file
    ordinal BIGINT NOT NULL,
    value   INTEGER NOT NULL
);
