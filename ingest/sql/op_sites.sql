-- op_sites: stores the Python site the sweep found for each cpu_op.
-- Parameters: $trace (trace_id), $key (trace_id * 2^32: op_id of ordinal 0).
UPDATE cpu_ops SET site_id = d.value
FROM _derived d
WHERE d.kind = 2
  AND cpu_ops.trace_id = $trace
  AND cpu_ops.op_id = $key + d.ordinal
