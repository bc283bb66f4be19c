-- shift_py_frame_events: moves the times of one trace's py_frame_events by baseTimeNanoseconds
-- (Kineto writes it after the events, so rows are appended with relative times).
-- Parameters: $trace, $base (ns).
UPDATE py_frame_events SET ts_ns = ts_ns + $base WHERE trace_id = $trace
