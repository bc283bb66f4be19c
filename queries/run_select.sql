-- run_select: the runs a selector (@latest, @latest~N, tag:K=V) can name, newest
-- first: every run holding a trace, ordered by ingest time (ties by run_id,
-- newest first), with its tags, optionally only those carrying tag
-- $key=$value.
--
-- Parameters: $key, $value (both NULL = every run).
--
-- Columns: run_id, label, ingested_at, tags ('key=value' sorted by key).
SELECT r.run_id, r.label, r.ingested_at,
       coalesce(list_sort([e.key || '=' || coalesce(e.value, '') FOR e IN map_entries(r.tags)]), []) AS tags
FROM runs r
WHERE EXISTS (SELECT 1 FROM traces t WHERE t.run_id = r.run_id)
  AND ($key IS NULL OR list_contains([e.value FOR e IN map_entries(r.tags) IF e.key = $key], $value))
ORDER BY r.ingested_at DESC, r.run_id DESC
