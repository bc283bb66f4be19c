-- nsys_gpu_ranges: projects the NVTX ranges of nsys trace $trace onto its
-- GPUs, as Kineto records gpu_user_annotation events: for each range (an
-- annotation of cat user_annotation) and device, one gpu_user_annotation
-- window from the first start to the last end of the GPU events whose
-- runtime call ran on the range's thread inside the range. Stage and step
-- detection then read an nsys trace as they read a Kineto one. Runs after
-- link_kernels (it follows kernels.launch_id).
-- Parameters: $trace.
INSERT INTO annotations (trace_id, name, cat, ts_ns, dur_ns, pid, tid, stage)
SELECT $trace, any_value(a.name), 'gpu_user_annotation', min(k.ts_ns),
       max(k.ts_ns + k.dur_ns) - min(k.ts_ns), k.device, NULL, any_value(a.stage)
FROM annotations a
JOIN launches l
  ON l.pid = a.pid AND l.tid = a.tid
 AND l.ts_ns >= a.ts_ns AND l.ts_ns < a.ts_ns + a.dur_ns
JOIN kernels k ON k.launch_id = l.launch_id
WHERE a.trace_id = $trace AND a.cat = 'user_annotation'
  AND l.trace_id = $trace AND k.trace_id = $trace AND k.device IS NOT NULL
GROUP BY a.rowid, k.device
ORDER BY min(k.ts_ns), k.device, any_value(a.name)
