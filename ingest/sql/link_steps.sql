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
-- GPU and CPU windows are matched by one sweep, partitioned by kind.
-- Parameters: $trace.
UPDATE kernels SET step = m.step
FROM (
    WITH _s AS (
        SELECT * FROM steps WHERE trace_id = $trace
    ),
    -- Each kind's windows, numbered in start order.
    _w AS (
        SELECT kind, step, ts_ns, end_ns,
               row_number() OVER (PARTITION BY kind ORDER BY ts_ns, step) AS w
        FROM (
            SELECT 'gpu' AS kind, step, gpu_ts_ns AS ts_ns, gpu_end_ns AS end_ns
            FROM _s WHERE gpu_ts_ns IS NOT NULL
            UNION ALL
            SELECT 'cpu', step, cpu_ts_ns, cpu_end_ns
            FROM _s WHERE cpu_ts_ns IS NOT NULL
        )
    ),
    -- The time a kernel is placed by in each kind: its own start in GPU
    -- windows, its launch's start in CPU windows.
    _t AS (
        SELECT 'gpu' AS kind, kernel_id, ts_ns FROM kernels WHERE trace_id = $trace
        UNION ALL
        SELECT 'cpu', k.kernel_id, l.ts_ns
        FROM kernels k
        JOIN launches l ON l.launch_id = k.launch_id
        WHERE k.trace_id = $trace AND l.trace_id = $trace
          AND EXISTS (SELECT 1 FROM _w WHERE kind = 'cpu')
    ),
    -- A window sorts before a kernel at its start time, so a kernel
    -- starting exactly where a window starts is inside it.
    _in AS (
        SELECT p.kind, p.kernel_id, w.step
        FROM (
            SELECT kind, kernel_id, ts_ns,
                   max(w) OVER (PARTITION BY kind ORDER BY ts_ns, is_kernel ROWS UNBOUNDED PRECEDING) AS w
            FROM (
                SELECT kind, ts_ns, 0 AS is_kernel, w, NULL::BIGINT AS kernel_id FROM _w
                UNION ALL
                SELECT kind, ts_ns, 1, NULL, kernel_id FROM _t
            )
        ) p
        JOIN _w w USING (kind, w)
        WHERE p.kernel_id IS NOT NULL AND p.ts_ns < w.end_ns
    )
    SELECT k.kernel_id,
           CASE WHEN EXISTS (SELECT 1 FROM _s WHERE source = 'window') THEN 0
                ELSE coalesce(g.step, c.step) END AS step
    FROM kernels k
    LEFT JOIN _in g ON g.kernel_id = k.kernel_id AND g.kind = 'gpu'
    LEFT JOIN _in c ON c.kernel_id = k.kernel_id AND c.kind = 'cpu'
    WHERE k.trace_id = $trace
    ORDER BY k.kernel_id
) m
WHERE kernels.trace_id = $trace AND kernels.kernel_id = m.kernel_id
