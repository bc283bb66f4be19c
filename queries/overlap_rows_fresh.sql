-- overlap_rows_fresh: whether run $run's rank $rank has saved
-- overlap-opportunity rows (overlap_row_store, written by
-- aggregates.SaveOverlapRows) that are current and made for the verdict floor
-- $min_dur_ns: the fingerprint recorded with them is the run's now
-- (_overlap_rows_fingerprint: its kernels, the classifier, its traces).
--
-- Parameters: $run, $rank, $min_dur_ns; $overlap_fp: the run's
-- overlap_fingerprint.sql, NULL to compute it here.
--
-- Columns: fresh. One row.
SELECT coalesce((SELECT min_dur_ns = $min_dur_ns AND fingerprint = _overlap_rows_fingerprint($run, ofp := $overlap_fp)
                 FROM overlap_row_runs
                 WHERE run_id = $run AND rank = $rank), false) AS fresh
