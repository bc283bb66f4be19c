-- overlap_store_rows: third step of saving a run's overlap: the rows
-- aggregates/overlap_sweep.go swept for a range of groups (the table _swept of
-- its query appender), with their kernels' columns, into
-- kernel_overlap_store: the columns and values of kernel_overlap_for
-- (migrations/0017_finish_batch.sql).
INSERT INTO kernel_overlap_store
SELECT k.kernel_id, k.trace_id, k.run_id, k.rank, k.stage, k.device, k.stream,
       k.name_id, k.ts_ns, k.dur_ns,
       s.hidden_ns, s.hidden_by_compute_ns, k.dur_ns - s.hidden_ns AS exclusive_ns,
       s.start_rank, s.starts_before_end, s.union_share_ns,
       s.prev_kernel_id, s.next_kernel_id
FROM _swept s
JOIN kernels k USING (kernel_id)
