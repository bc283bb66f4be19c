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
