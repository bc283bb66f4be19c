-- shift_cpu_ops: moves the times of one trace's cpu_ops by baseTimeNanoseconds
-- (Kineto writes it after the events, so rows are appended with relative times).
-- Parameters: $trace, $base (ns).
UPDATE cpu_ops SET ts_ns = ts_ns + $base WHERE trace_id = $trace
