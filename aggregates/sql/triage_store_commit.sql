-- triage_store_commit: record run $run's saved triage report (its rows
-- inserted in the same transaction), with the run's fingerprint now.
-- Parameters: $run, $rank, $min_share, $overlap_rows, $recipe.
INSERT INTO triage_store_runs
SELECT $run, $rank, $min_share, $overlap_rows, $recipe, _triage_fingerprint($run), now()::TIMESTAMP
