-- overlap_rows_store_runs: overlap_rows_store.sql for the runs $runs, every
-- one of them with its per-kernel overlap saved and current (the batches
-- of overlap_store_current.sql's runs): the rows are computed from that
-- copy by _overlap_rows_saved, which does not bind the computation of the
-- overlap that _overlap_rows_for would skip ($run and $rank NULL, the
-- other parameters as there).
INSERT INTO overlap_row_store
SELECT r.run_id, r.rank, r.* EXCLUDE (run_id, rank)
FROM _overlap_rows_saved($run, $mapping, $rank, $stage, $min_share, $min_dur_ns, $overlap_fp, $runs) r
