-- shift_annotations: moves the times of one trace's annotations by baseTimeNanoseconds
-- (Kineto writes it after the events, so rows are appended with relative times).
-- Parameters: $trace, $base (ns).
UPDATE annotations SET ts_ns = ts_ns + $base WHERE trace_id = $trace
