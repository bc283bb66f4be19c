-- runs: one row per run that holds at least one trace, newest first.
-- Parameters: none.
-- Columns: run_id, label, framework, model ('unknown' when not recorded),
-- traces, ranks and stages (sorted lists), gpu_events (kernels + memcpy +
-- memset), ingested_at, formats (the traces' source formats, sorted:
-- kineto, nsys).
SELECT r.run_id,
       r.label,
       r.framework,
       coalesce(r.model, 'unknown') AS model,
       count(DISTINCT t.trace_id) AS traces,
       list(DISTINCT t.rank ORDER BY t.rank) AS ranks,
       list(DISTINCT t.stage ORDER BY t.stage) AS stages,
       sum(t.kernel_events + t.memcpy_events + t.memset_events) AS gpu_events,
       r.ingested_at,
       list(DISTINCT coalesce(t.source_format, 'kineto') ORDER BY coalesce(t.source_format, 'kineto')) AS formats
FROM runs r
JOIN traces t USING (run_id)
GROUP BY ALL
ORDER BY r.ingested_at DESC, r.run_id DESC
