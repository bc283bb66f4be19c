-- triage_run: the run the triage header describes.
--
-- One row for the run whose id is $run or whose label is $label (pass the
-- other as NULL); no row when there is none. Columns as in `runs`, with the
-- model 'unknown' when not recorded and framework_evidence '' when absent.
--
-- Parameters: $run (run_id or NULL); $label (label or NULL).
SELECT run_id, label, framework, coalesce(framework_evidence, '') AS framework_evidence,
       coalesce(model, 'unknown') AS model, tp_size, dp_size, ep_size, pp_size, cuda_graph,
       coalesce(source_dir, '') AS source_dir
FROM runs
WHERE run_id = $run OR label = $label
ORDER BY run_id
