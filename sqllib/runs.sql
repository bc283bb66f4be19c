-- runs: naming a run in SQL.

-- _run_id(run): the run_id of run `run`, given as its id (integer or text)
-- or its label; an id wins when a label reads like another run's id. NULL
-- when `run` is NULL (which the macros below read as "every run"); an
-- error naming `run` when nothing matches, so a typo never reads as "every
-- run".
CREATE MACRO _run_id(run) AS (
    CASE WHEN run IS NULL THEN NULL
         ELSE coalesce((
             SELECT r.run_id
             FROM runs r
             WHERE r.run_id::VARCHAR = run::VARCHAR OR r.label = run::VARCHAR
             ORDER BY (r.run_id::VARCHAR = run::VARCHAR) DESC
             LIMIT 1), error('no run with id or label ' || run::VARCHAR))
    END
);

-- _run_in(id, ids): whether run id `id` is in the list `ids` (NULL when
-- `ids` is NULL), as list_contains(ids, id). The range test before it is
-- what lets DuckDB skip the row groups of other runs by their zone maps:
-- with the list a constant it becomes a filter on the table's scan, where
-- list_contains alone read every row of the table (the saves of one run
-- into a warehouse of 1,000 runs read 1.5 M kernels, their saved overlap
-- and every launch). A table's rows are stored in the order their runs
-- were ingested, so the runs of one finish are one range.
CREATE MACRO _run_in(id, ids) AS
    id BETWEEN list_min(ids) AND list_max(ids) AND list_contains(ids, id);
