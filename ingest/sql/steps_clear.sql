-- steps_clear: drop the step windows of trace $trace before they are found
-- again (ingest.RecomputeSteps).
-- Parameters: $trace.
DELETE FROM steps WHERE trace_id = $trace
