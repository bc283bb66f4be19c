-- timeline_window: the GPU events drawn in one ASCII timeline (triage
-- --timeline): every event of one trace and device that overlaps
-- a time window, whatever its stream or stage.
--
-- Columns, one row per event: kernel_id, short name, category ('other' when
-- unclassified), stream (NULL when the trace gave none), ts_ns, dur_ns.
-- Sorted by stream (NULL last), start, kernel_id.
--
-- Parameters:
--   $trace    trace_id
--   $device   device (NULL matches events without a device)
--   $from_ns  window start (absolute ns)
--   $to_ns    window end; an event overlaps when it ends after $from_ns and
--             starts before $to_ns (zero-length events inside count)
SELECT k.kernel_id, n.short_name, coalesce(n.category, 'other') AS category,
       k.stream, k.ts_ns, k.dur_ns
FROM kernels k
JOIN kernel_names n USING (name_id)
WHERE k.trace_id = $trace
  AND k.device IS NOT DISTINCT FROM $device
  AND k.ts_ns < $to_ns
  AND (k.ts_ns + k.dur_ns > $from_ns OR (k.dur_ns = 0 AND k.ts_ns >= $from_ns))
ORDER BY k.stream NULLS LAST, k.ts_ns, k.kernel_id
