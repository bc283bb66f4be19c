-- link_kernels: for every GPU event of one trace, finds the launch that
-- issued it (same correlation, latest launch at or before it), its cpu_op
-- (External id of the kernel, else of the launch; latest op at or before it),
-- its Python site (the launch's, else the op's; none for CUDA-graph replays,
-- whose one launch stands for every replayed kernel), and, when the file
-- name gave no stage, its stage from the GPU annotation window containing it,
-- else from the CPU annotation around its launch. Also applies the rank from
-- distributedInfo and moves times by baseTimeNanoseconds.
-- Runs before the launch and annotation times are moved.
-- Parameters: $trace, $base (ns), $rank, $merged, $stage_known.
UPDATE kernels SET
    launch_id    = m.launch_id,
    op_id        = m.op_id,
    site_id      = m.site_id,
    graph_launch = m.graph,
    stage        = m.stage,
    rank         = CASE WHEN $merged THEN kernels.rank ELSE $rank END,
    ts_ns        = kernels.ts_ns + $base
FROM (
    SELECT k.kernel_id,
           l.launch_id,
           o.op_id,
           coalesce(l.graph, false) AS graph,
           CASE WHEN l.graph THEN NULL ELSE coalesce(l.site_id, o.site_id) END AS site_id,
           CASE WHEN $stage_known THEN k.stage
                ELSE coalesce(
                    CASE WHEN k.ts_ns < g.end_ns THEN g.stage END,
                    CASE WHEN l.ts_ns < c.end_ns THEN c.stage END,
                    k.stage)
           END AS stage
    FROM (SELECT kernel_id, ts_ns, device, correlation, external_id, stage
          FROM kernels WHERE trace_id = $trace) k
    ASOF LEFT JOIN (SELECT launch_id, correlation, external_id, ts_ns, pid, tid, site_id,
                           name LIKE '%GraphLaunch%' AS graph
                    FROM launches
                    WHERE trace_id = $trace AND correlation IS NOT NULL) l
        ON k.correlation = l.correlation AND k.ts_ns >= l.ts_ns
    ASOF LEFT JOIN (SELECT op_id, external_id, ts_ns, site_id
                    FROM cpu_ops
                    WHERE trace_id = $trace AND external_id IS NOT NULL) o
        ON coalesce(k.external_id, l.external_id) = o.external_id AND k.ts_ns >= o.ts_ns
    ASOF LEFT JOIN (SELECT pid AS device, ts_ns, ts_ns + dur_ns AS end_ns, stage
                    FROM annotations
                    WHERE trace_id = $trace AND cat = 'gpu_user_annotation' AND stage IS NOT NULL) g
        ON k.device = g.device AND k.ts_ns >= g.ts_ns
    ASOF LEFT JOIN (SELECT pid, tid, ts_ns, ts_ns + dur_ns AS end_ns, stage
                    FROM annotations
                    WHERE trace_id = $trace AND cat = 'user_annotation' AND stage IS NOT NULL) c
        ON l.pid = c.pid AND l.tid = c.tid AND l.ts_ns >= c.ts_ns
) m
WHERE kernels.trace_id = $trace AND kernels.kernel_id = m.kernel_id
