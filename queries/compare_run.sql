-- compare_run: what the compare header says about one run: identity,
-- configuration and tags.
--
-- One row for run $run (none when there is no such run). Columns:
--   run_id, label, framework, model ('unknown' when not recorded)
--   tp_size, dp_size, ep_size, pp_size, cuda_graph   NULL when unknown
--   gpus         the distinct GPU names of its traces (device_name), sorted
--   tags         'key=value' for each tag, sorted by key
--   ingested_at
--
-- Parameters: $run.
SELECT r.run_id, r.label, r.framework, coalesce(r.model, 'unknown') AS model,
       r.tp_size, r.dp_size, r.ep_size, r.pp_size, r.cuda_graph,
       coalesce((SELECT list(DISTINCT t.device_name ORDER BY t.device_name)
                 FROM traces t WHERE t.run_id = r.run_id AND t.device_name IS NOT NULL), []) AS gpus,
       coalesce(list_sort([e.key || '=' || coalesce(e.value, '') FOR e IN map_entries(r.tags)]), []) AS tags,
       r.ingested_at
FROM runs r
WHERE r.run_id = $run
