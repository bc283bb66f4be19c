-- frame_depths: stores each Python frame's nesting depth from the sweep
-- (frames without a row are outermost, depth 0).
-- Parameters: $trace (trace_id).
UPDATE py_frame_events SET depth = d.value
FROM _derived d
WHERE d.kind = 3
  AND py_frame_events.trace_id = $trace
  AND py_frame_events.ordinal = d.ordinal
