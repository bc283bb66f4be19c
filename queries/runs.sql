-- runs: one row per run that holds at least one trace, newest first,
-- optionally only the runs carrying every tag of $tags.
-- Parameters: $tags (a list of 'key=value'; empty = every run).
-- Columns: run_id, label, framework, model ('unknown' when not recorded),
-- traces, ranks and stages (sorted lists; the stages of the run's GPU events,
-- as triage shows them, else its traces' when it has none), gpu_events (kernels + memcpy +
-- memset), ingested_at, formats (the traces' source formats, sorted:
-- kineto, nsys), tags ('key=value' sorted by key).
WITH _r AS (
    SELECT r.*,
           coalesce(list_sort([e.key || '=' || coalesce(e.value, '') FOR e IN map_entries(r.tags)]), []) AS tag_list
    FROM runs r
),
-- A trace's file-level stage says "mixed" for a vLLM or TokenSpeed trace whose
-- kernels are prefill and decode: the kernels' stages are what reports show.
_ks AS (
    SELECT run_id, list(DISTINCT stage ORDER BY stage) AS stages
    FROM kernels
    GROUP BY run_id
)
SELECT r.run_id,
       r.label,
       r.framework,
       coalesce(r.model, 'unknown') AS model,
       count(DISTINCT t.trace_id) AS traces,
       list(DISTINCT t.rank ORDER BY t.rank) AS ranks,
       coalesce(any_value(ks.stages), list(DISTINCT t.stage ORDER BY t.stage)) AS stages,
       sum(t.kernel_events + t.memcpy_events + t.memset_events) AS gpu_events,
       r.ingested_at,
       list(DISTINCT coalesce(t.source_format, 'kineto') ORDER BY coalesce(t.source_format, 'kineto')) AS formats,
       any_value(r.tag_list) AS tags
FROM _r r
JOIN traces t USING (run_id)
LEFT JOIN _ks ks USING (run_id)
WHERE list_has_all(r.tag_list, $tags::VARCHAR[])
GROUP BY r.run_id, r.label, r.framework, r.model, r.ingested_at
ORDER BY r.ingested_at DESC, r.run_id DESC
