-- events: the event tables joined with their names, for ad hoc SQL. Part
-- of the contract users write SQL against (the README's warehouse
-- reference); lake/write.go copies both into a lake's views.sql.

-- py_frames: Python frames with their names, as users expect to query
-- them. One row per python_function event. Columns: those of
-- py_frame_events (trace_id, ordinal, frame_id, parent_id, ts_ns, dur_ns,
-- pid, tid, depth, site_id) with the frame's name, file, line and func
-- from sites.
CREATE VIEW py_frames AS
SELECT f.trace_id, f.ordinal, f.frame_id, f.parent_id, s.name, s.file, s.line, s.func,
       f.ts_ns, f.dur_ns, f.pid, f.tid, f.depth, f.site_id
FROM py_frame_events f
JOIN sites s USING (site_id);

-- kernel_events: kernels with everything a question usually needs. One row
-- per GPU event. Columns: those of kernels, with
--   run, framework, model  the run's label, framework and model
--   path, role             the trace file's path and two-trace role
--   name, short_name, family, category  from kernel_names
--   dur_us                 dur_ns / 1000.0
--   cpu_op                 the name of the CPU op that launched it
--   site, site_file, site_line, site_func  its Python launch site (sites)
CREATE VIEW kernel_events AS
SELECT k.kernel_id, r.label AS run, r.framework, r.model, t.path, k.trace_id,
       k.rank, k.stage, t.role, k.kind,
       n.name, n.short_name, n.family, n.category,
       k.ts_ns, k.dur_ns, k.dur_ns / 1000.0 AS dur_us,
       k.device, k.stream, k.correlation, k.external_id, k.grid, k.block, k.bytes,
       k.graph_launch, k.launch_id, k.op_id, o.name AS cpu_op,
       k.site_id, s.display AS site, s.file AS site_file, s.line AS site_line,
       s.func AS site_func
FROM kernels k
JOIN kernel_names n USING (name_id)
JOIN traces t USING (trace_id)
JOIN runs r ON r.run_id = k.run_id
LEFT JOIN sites s ON s.site_id = k.site_id
LEFT JOIN cpu_ops o ON o.op_id = k.op_id;

COMMENT ON VIEW py_frames IS 'Python frames with their names.';
COMMENT ON VIEW kernel_events IS 'Kernels with run label, path, names, family, Python site and CPU op: the view for ad hoc SQL.';
