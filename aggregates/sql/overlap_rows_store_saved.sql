-- overlap_rows_store_saved: overlap_rows_store.sql for runs whose
-- per-kernel overlap is saved and current (overlap_store_current.sql
-- accepted them: the runs $runs of a batch, or run $run's rank $rank of
-- one too large to share a batch): the rows are computed from that copy
-- by _overlap_rows_saved, which neither binds the computation of the
-- overlap that _overlap_rows_for would skip nor copies the saved rows
-- into a CTE (an 85 k-kernel rank: 68 -> 40 ms). Parameters as there.
INSERT INTO overlap_row_store
SELECT r.run_id, r.rank, r.* EXCLUDE (run_id, rank)
FROM _overlap_rows_saved($run, $mapping, $rank, $stage, $min_share, $min_dur_ns, $overlap_fp, $runs) r
