-- triage_traces: the "Traces:" lines of the triage header.
--
-- One row per trace file of run $run: its path as ingested, rank, file-level
-- stage, two-trace role and GPU events stored (kernels + memcpy + memset).
-- Sorted by rank, stage (prefill, decode, mixed, unknown, others by name),
-- path, content hash (two files stored from one path: not by trace_id,
-- which follows the order files were ingested in).
--
-- Parameters: $run.
-- Columns: trace_id, path, rank, stage, role, gpu_events.
SELECT t.trace_id, t.path, t.rank, t.stage, t.role,
       (t.kernel_events + t.memcpy_events + t.memset_events)::BIGINT AS gpu_events
FROM traces t
WHERE t.run_id = $run
ORDER BY t.rank,
         CASE t.stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                      WHEN 'unknown' THEN 3 ELSE 4 END,
         t.stage, t.path, t.content_hash
