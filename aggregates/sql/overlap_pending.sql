-- overlap_pending: the runs whose saved per-kernel overlap (aggregates.SaveOverlap)
-- is missing or older than one of their traces, i.e. what Finish still has
-- to save. A run whose traces were all given the mapping role by the caller
-- (two-trace triage, `ingest --role mapping`) is left out: it is there to
-- lend Python sites, its overlap is not what anyone asked to see. (A run
-- detected as mapping from its server args may well be triaged alone.)
-- A run whose save failed $max_attempts times (finish_failures) is left out
-- until one of its traces is newer than the failures: retrying it for ever
-- would cost every later ingest that save, and fail it.
--
-- Due is not the opposite of current (_overlap_current, what readers ask):
-- a copy made stale by a reclassification or another catalog (the
-- fuse-pattern and overlap-row fingerprints cover them) is not due, so a
-- finish never fingerprints every run of the warehouse, nor saves every
-- run's rows again each time a report switches catalogs; readers compute
-- what is stale, and the run's next ingest saves it again.
--
-- One row per run, by run_id.
-- Columns: run_id.
-- Parameters: $max_attempts.
SELECT t.run_id
FROM traces t
LEFT JOIN kernel_overlap_runs s ON s.run_id = t.run_id
LEFT JOIN finish_failures f ON f.run_id = t.run_id AND f.store = 'overlap'
GROUP BY t.run_id
HAVING bool_or(t.role <> 'mapping' OR t.role_source <> 'flag')
   AND (any_value(s.stored_at) IS NULL OR max(t.ingested_at) > any_value(s.stored_at))
   AND (coalesce(any_value(f.attempts), 0) < $max_attempts OR max(t.ingested_at) > any_value(f.traces_at))
ORDER BY t.run_id
