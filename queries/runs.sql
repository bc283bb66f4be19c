-- runs: one row per run that holds at least one trace, newest first,
-- optionally only the runs carrying every tag of $tags.
-- Parameters: $tags (a list of 'key=value'; empty = every run).
-- Columns: run_id, label, framework, model ('unknown' when not recorded),
-- traces, ranks and stages (sorted lists), gpu_events (kernels + memcpy +
-- memset), ingested_at, formats (the traces' source formats, sorted:
-- kineto, nsys), tags ('key=value' sorted by key).
WITH _r AS (
    SELECT r.*,
           coalesce(list_sort([e.key || '=' || coalesce(e.value, '') FOR e IN map_entries(r.tags)]), []) AS tag_list
    FROM runs r
)
SELECT r.run_id,
       r.label,
       r.framework,
       coalesce(r.model, 'unknown') AS model,
       count(DISTINCT t.trace_id) AS traces,
       list(DISTINCT t.rank ORDER BY t.rank) AS ranks,
       list(DISTINCT t.stage ORDER BY t.stage) AS stages,
       sum(t.kernel_events + t.memcpy_events + t.memset_events) AS gpu_events,
       r.ingested_at,
       list(DISTINCT coalesce(t.source_format, 'kineto') ORDER BY coalesce(t.source_format, 'kineto')) AS formats,
       any_value(r.tag_list) AS tags
FROM _r r
JOIN traces t USING (run_id)
WHERE list_has_all(r.tag_list, $tags::VARCHAR[])
GROUP BY r.run_id, r.label, r.framework, r.model, r.ingested_at
ORDER BY r.ingested_at DESC, r.run_id DESC
