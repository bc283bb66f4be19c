-- launch_sites: stores the Python site the sweep found for each launch.
-- Parameters: $trace (trace_id), $key (trace_id * 2^32: launch_id of ordinal 0).
UPDATE launches SET site_id = d.value
FROM _derived d
WHERE d.kind = 1
  AND launches.trace_id = $trace
  AND launches.launch_id = $key + d.ordinal
