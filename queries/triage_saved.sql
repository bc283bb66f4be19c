-- triage_saved: the saved triage report of run $run (triage_store, saved by
-- target.Finish), a row per section, when it is current for the binary's
-- recipe $recipe and was made for $min_share and $overlap_rows
-- (_triage_current, sqllib/triage.sql); no row otherwise. Its fingerprint
-- is computed here, so one statement both checks and reads the copy.
--
-- Parameters: $run, $recipe, $min_share, $overlap_rows.
--
-- Columns: rank, section, rows (the section's JSON). One row per section.
SELECT s.rank, s.section, s.rows
FROM triage_store_runs r
JOIN triage_store s USING (run_id)
WHERE r.run_id = $run
  AND r.min_share = $min_share
  AND r.overlap_rows = $overlap_rows
  AND _triage_current($run, $recipe)
ORDER BY s.section
