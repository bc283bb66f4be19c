-- fusion_sweep_kernels: the GPU events of rank $rank of run $run whose
-- text can fill a chain step (fusion_sweep_roles.sql, run first on the same
-- connection), as aggregates/fusion_sweep.go walks them: by stream (trace,
-- device, stream as _fusion_kernels keys them), then place on it.
-- Parameters: $run, $rank.
-- Columns: trace_id, dev, strm, stream_pos, kernel_id, stage, ts_ns,
-- dur_ns, text (fusion_sweep_roles.sql's number).
SELECT k.trace_id::BIGINT, k.dev::BIGINT, k.strm::BIGINT, k.stream_pos::BIGINT, k.kernel_id,
       k.stage, k.ts_ns, k.dur_ns, t.text::BIGINT
FROM _fusion_kernels($run, NULL, $rank) k
JOIN (SELECT DISTINCT text, name_id, site_id, op_name FROM temp.main._fusion_sweep_roles) t
  ON t.name_id = k.name_id
 AND t.site_id IS NOT DISTINCT FROM k.site_id
 AND t.op_name IS NOT DISTINCT FROM k.op_name
ORDER BY k.trace_id, k.dev, k.strm, k.stream_pos
