-- overlap_by_kernel_saved: the rows overlap_by_kernel.sql gives for a
-- single-trace report ($mapping NULL) of run $run's rank $rank, read from
-- the copy aggregates.SaveOverlapRows saved (current, and made for the
-- report's verdict floor, only when overlap_rows_fresh.sql says so): the
-- saved rows cover every stage with no share floor, so a stage and a floor
-- are filters here. Same columns, same order: stage (prefill, decode,
-- mixed, unknown, others by name), then priority, exclusive time
-- descending, short name.
--
-- Parameters: $run, $rank, $stage (NULL = every stage), $min_share.
--
-- Columns: as overlap_by_kernel.sql: stage, priority, verdict, kernel,
-- family, category, scope, scope_match, launches, total_ns, hidden_ns,
-- hidden_by_compute_ns, exclusive_ns, busy_ns, busy_share_pct,
-- exclusive_pct, hidden_pct, dominant, dep_risk, recommendation,
-- longest_kernel_id, longest_trace_id, longest_ts_ns, longest_dur_ns,
-- longest_device, longest_stream, run_id, rank.
SELECT s.stage, s.priority, s.verdict, s.kernel, s.family, s.category, s.scope, s.scope_match,
       s.launches, s.total_ns, s.hidden_ns, s.hidden_by_compute_ns, s.exclusive_ns, s.busy_ns,
       s.busy_share_pct, s.exclusive_pct, s.hidden_pct,
       s.dominant, s.dep_risk, s.recommendation,
       s.longest_kernel_id, s.longest_trace_id, s.longest_ts_ns, s.longest_dur_ns,
       s.longest_device, s.longest_stream, s.run_id, s.rank
FROM overlap_row_store s
WHERE s.run_id = $run AND s.rank = $rank
  AND ($stage IS NULL OR s.stage = $stage)
  AND s.busy_share_pct >= $min_share
ORDER BY CASE s.stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                      WHEN 'unknown' THEN 3 ELSE 4 END,
         s.stage, s.priority, s.exclusive_ns DESC, s.kernel
