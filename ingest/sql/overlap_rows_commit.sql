-- overlap_rows_commit: last step of saving the overlap-opportunity rows of
-- run $run's rank $rank, computed with the verdict floor $min_dur_ns:
-- record it and the run's fingerprint, which makes readers use the saved
-- rows for as long as the run's kernels, the classifier and the run's
-- traces stay the same.
-- Parameters: $run, $rank, $min_dur_ns.
INSERT INTO overlap_row_runs
VALUES ($run, $rank, $min_dur_ns, _overlap_rows_fingerprint($run), now()::TIMESTAMP)
