-- triage_saved_record: whether run $run has a saved triage report
-- (triage_store_runs) made by a binary of recipe $recipe for $min_share
-- and $overlap_rows, current or not: the cheap check before
-- triage_saved.sql, whose fingerprint is a pass over the run's kernels
-- (0.1 CPU-s at 1 M kernels, wasted on a run without such a report).
--
-- Parameters: $run, $recipe, $min_share, $overlap_rows.
--
-- Columns: saved (true when there is such a record). One row.
SELECT count(*) > 0 AS saved
FROM triage_store_runs
WHERE run_id = $run AND recipe = $recipe AND min_share = $min_share AND overlap_rows = $overlap_rows
