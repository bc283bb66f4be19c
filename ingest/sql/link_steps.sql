-- link_steps: sets kernels.step for every GPU event of trace $trace from
-- the trace's rows in `steps` (insert_steps.sql): the step whose GPU window
-- contains the event's start, else the step whose CPU window contains the
-- start of its launch, else NULL; every event is in step 0 of a trace
-- without step evidence. Windows of one kind do not overlap, so "the window
-- containing t" is the last one starting at or before t, if t is before its
-- end: one sort of the windows' starts with the events and a running max,
-- no interval join. Replaces any earlier assignment (--steps-by). The
-- rows to update come in kernel_id order, the order they were appended in:
-- DuckDB applies an update a vector of 2,048 rows at a time, and in the
-- windows' time order each chunk touched rows all over the table (the
-- statement took 4x as long on a trace's 85 k uncommitted kernels).
-- Parameters: $trace.
UPDATE kernels SET step = m.step
FROM (
    WITH _s AS (
        SELECT * FROM steps WHERE trace_id = $trace
    ),
    _g AS (
        SELECT step, gpu_ts_ns AS ts_ns, gpu_end_ns AS end_ns,
               row_number() OVER (ORDER BY gpu_ts_ns, step) AS w
        FROM _s
        WHERE gpu_ts_ns IS NOT NULL
    ),
    _gpu AS (
        SELECT p.kernel_id, g.step
        FROM (
            SELECT kernel_id, ts_ns,
                   max(w) OVER (ORDER BY ts_ns, kind ROWS UNBOUNDED PRECEDING) AS w
            FROM (
                SELECT ts_ns, 0 AS kind, w, NULL::BIGINT AS kernel_id FROM _g
                UNION ALL
                SELECT ts_ns, 1, NULL, kernel_id FROM kernels WHERE trace_id = $trace
            )
        ) p
        JOIN _g g USING (w)
        WHERE p.kernel_id IS NOT NULL AND p.ts_ns < g.end_ns
    ),
    _c AS (
        SELECT step, cpu_ts_ns AS ts_ns, cpu_end_ns AS end_ns,
               row_number() OVER (ORDER BY cpu_ts_ns, step) AS w
        FROM _s
        WHERE cpu_ts_ns IS NOT NULL
    ),
    _cpu AS (
        SELECT p.kernel_id, c.step
        FROM (
            SELECT kernel_id, ts_ns,
                   max(w) OVER (ORDER BY ts_ns, kind ROWS UNBOUNDED PRECEDING) AS w
            FROM (
                SELECT ts_ns, 0 AS kind, w, NULL::BIGINT AS kernel_id FROM _c
                UNION ALL
                SELECT l.ts_ns, 1, NULL, k.kernel_id
                FROM kernels k
                JOIN launches l ON l.launch_id = k.launch_id
                WHERE k.trace_id = $trace AND l.trace_id = $trace
                  AND (SELECT count(*) FROM _c) > 0
            )
        ) p
        JOIN _c c USING (w)
        WHERE p.kernel_id IS NOT NULL AND p.ts_ns < c.end_ns
    )
    SELECT k.kernel_id,
           CASE WHEN EXISTS (SELECT 1 FROM _s WHERE source = 'window') THEN 0
                ELSE coalesce(g.step, c.step) END AS step
    FROM kernels k
    LEFT JOIN _gpu g USING (kernel_id)
    LEFT JOIN _cpu c USING (kernel_id)
    WHERE k.trace_id = $trace
    ORDER BY k.kernel_id
) m
WHERE kernels.trace_id = $trace AND kernels.kernel_id = m.kernel_id
