-- link_kernels_from: sets on trace $trace's GPU events what link_kernels.sql
-- and link_steps.sql compute, from the rows ingest/link.go computed in Go:
-- launch, cpu_op, Python site, graph replay, stage (NULL: the kernel keeps
-- the file's), place on its stream, absolute start and step; and the rank
-- as link_kernels.sql sets it. __rows__ is those rows (a typed table
-- function of kernel_id, launch_id, op_id, site_id, graph, stage, stream_pos, ts_ns,
-- step), in kernel_id order.
-- Parameters: $trace, $rank, $merged.
UPDATE kernels SET
    launch_id    = m.launch_id,
    op_id        = m.op_id,
    site_id      = m.site_id,
    graph_launch = m.graph,
    stage        = coalesce(m.stage, kernels.stage),
    rank         = CASE WHEN $merged THEN kernels.rank ELSE $rank END,
    stream_pos   = m.stream_pos,
    ts_ns        = m.ts_ns,
    step         = m.step
FROM __rows__ m
WHERE kernels.trace_id = $trace AND kernels.kernel_id = m.kernel_id
