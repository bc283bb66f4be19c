-- overlap_rows_pending: the runs whose saved overlap-opportunity rows
-- (ingest.SaveOverlapRows) are missing or older than one of their traces,
-- i.e. what Finish still has to save; runs given the mapping role by the
-- caller are left out, as in overlap_pending.sql.
--
-- One row per run, by run_id.
-- Columns: run_id.
-- No parameters.
SELECT t.run_id
FROM traces t
LEFT JOIN (SELECT run_id, min(stored_at) AS stored_at FROM overlap_row_runs GROUP BY run_id) s
       ON s.run_id = t.run_id
GROUP BY t.run_id
HAVING bool_or(t.role <> 'mapping' OR t.role_source <> 'flag')
   AND (any_value(s.stored_at) IS NULL OR max(t.ingested_at) > any_value(s.stored_at))
ORDER BY t.run_id
