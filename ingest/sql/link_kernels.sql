-- link_kernels: for every GPU event of one trace, finds the launch that
-- issued it (same correlation; with several, the latest at or before it),
-- its cpu_op (External id of the kernel, else of the launch; with several,
-- the latest op at or before it), its Python site (the launch's, else the
-- op's; none for CUDA-graph replays, whose one launch stands for every
-- replayed kernel), and, when the file gave no stage, its stage from the
-- innermost GPU annotation window containing it, else from the CPU
-- annotation around its launch. Also applies the rank from distributedInfo
-- and moves times by baseTimeNanoseconds, and numbers each event's place on
-- its stream (stream_pos). Runs before launch and annotation times are moved.
-- Ties go to the later launch or op (the larger id) and the least stage
-- name, as ingest/link.go, which links JSON traces in Go, decides them.
-- Hash joins with row_number() tie-breaks, not ASOF joins: on rows not yet
-- committed DuckDB 1.5 ran the ASOF plan about 1000x slower.
-- Parameters: $trace, $base (ns), $rank, $merged, $stage_known.
UPDATE kernels SET
    launch_id    = m.launch_id,
    op_id        = m.op_id,
    site_id      = m.site_id,
    graph_launch = m.graph,
    stage        = m.stage,
    rank         = CASE WHEN $merged THEN kernels.rank ELSE $rank END,
    stream_pos   = m.stream_pos,
    ts_ns        = kernels.ts_ns + $base
FROM (
    WITH k AS (
        SELECT kernel_id, ts_ns, device, correlation, external_id, stage,
               row_number() OVER (PARTITION BY device, stream ORDER BY ts_ns, kernel_id) AS stream_pos
        FROM kernels WHERE trace_id = $trace
    ), kl AS (
        SELECT k.*, l.launch_id, l.external_id AS launch_external_id, l.ts_ns AS launch_ts,
               l.pid AS launch_pid, l.tid AS launch_tid, l.site_id AS launch_site, l.graph
        FROM k
        LEFT JOIN (SELECT launch_id, correlation, external_id, ts_ns, pid, tid, site_id,
                          name LIKE '%GraphLaunch%' AS graph
                   FROM launches WHERE trace_id = $trace AND correlation IS NOT NULL) l
            ON k.correlation = l.correlation
        QUALIFY row_number() OVER (PARTITION BY k.kernel_id
                                   ORDER BY (l.ts_ns <= k.ts_ns) DESC NULLS LAST, l.ts_ns DESC, l.launch_id DESC) = 1
    ), klo AS (
        SELECT kl.*, o.op_id, o.site_id AS op_site
        FROM kl
        LEFT JOIN (SELECT op_id, external_id, ts_ns, site_id
                   FROM cpu_ops WHERE trace_id = $trace AND external_id IS NOT NULL) o
            ON coalesce(kl.external_id, kl.launch_external_id) = o.external_id
        QUALIFY row_number() OVER (PARTITION BY kl.kernel_id
                                   ORDER BY (o.ts_ns <= kl.ts_ns) DESC NULLS LAST, o.ts_ns DESC, o.op_id DESC) = 1
    ), gpu_window AS (
        SELECT k.kernel_id, g.stage
        FROM k
        JOIN (SELECT pid AS device, ts_ns, ts_ns + dur_ns AS end_ns, stage
              FROM annotations
              WHERE trace_id = $trace AND cat = 'gpu_user_annotation' AND stage IS NOT NULL) g
            ON k.device = g.device AND k.ts_ns >= g.ts_ns AND k.ts_ns < g.end_ns
        WHERE NOT $stage_known
        QUALIFY row_number() OVER (PARTITION BY k.kernel_id ORDER BY g.ts_ns DESC, g.end_ns, g.stage) = 1
    ), cpu_window AS (
        SELECT kl.kernel_id, c.stage
        FROM kl
        JOIN (SELECT pid, tid, ts_ns, ts_ns + dur_ns AS end_ns, stage
              FROM annotations
              WHERE trace_id = $trace AND cat = 'user_annotation' AND stage IS NOT NULL) c
            ON kl.launch_pid = c.pid AND kl.launch_tid = c.tid
           AND kl.launch_ts >= c.ts_ns AND kl.launch_ts < c.end_ns
        WHERE NOT $stage_known
        QUALIFY row_number() OVER (PARTITION BY kl.kernel_id ORDER BY c.ts_ns DESC, c.end_ns, c.stage) = 1
    )
    SELECT klo.kernel_id,
           klo.stream_pos,
           klo.launch_id,
           klo.op_id,
           coalesce(klo.graph, false) AS graph,
           CASE WHEN klo.graph THEN NULL ELSE coalesce(klo.launch_site, klo.op_site) END AS site_id,
           coalesce(gpu_window.stage, cpu_window.stage, klo.stage) AS stage
    FROM klo
    LEFT JOIN gpu_window USING (kernel_id)
    LEFT JOIN cpu_window USING (kernel_id)
) m
WHERE kernels.trace_id = $trace AND kernels.kernel_id = m.kernel_id
