-- run_detail: what `tracehouse runs RUN` says about one run besides its
-- trace files (those come from triage_traces.sql).
--
-- One row for the run labelled $label, none when there is no such run.
--
-- Parameters: $label.
--
-- Columns:
--   run_id, label, framework, framework_evidence ('' when absent),
--   model ('unknown' when not recorded), source_dir ('' when absent),
--   tp_size, dp_size, ep_size, pp_size, cuda_graph   NULL when unknown
--   ingested_at
--   tags              'key=value' strings sorted by key (empty list: none)
--   server_args_keys  number of top-level keys of server_args.json, NULL
--                     when none was found
--   overlap_saved     whether the run's per-kernel overlap is saved and
--                     current (_overlap_current; else reports recompute it)
SELECT r.run_id, r.label, r.framework, coalesce(r.framework_evidence, '') AS framework_evidence,
       coalesce(r.model, 'unknown') AS model, coalesce(r.source_dir, '') AS source_dir,
       r.tp_size, r.dp_size, r.ep_size, r.pp_size, r.cuda_graph, r.ingested_at,
       coalesce(list_transform(list_sort(map_keys(r.tags)), k -> k || '=' || r.tags[k]), []::VARCHAR[]) AS tags,
       CASE WHEN r.server_args IS NULL THEN NULL
            ELSE len(json_keys(r.server_args)) END AS server_args_keys,
       _overlap_current(r.run_id) AS overlap_saved
FROM runs r
WHERE r.label = $label
