-- overlap_rows_store: save the overlap-opportunity rows (_overlap_rows_for,
-- the rows queries/overlap_by_kernel.sql reads) of run $run's rank $rank,
-- or of every rank of the runs $runs at once ($run and $rank NULL), each
-- rank's rows those of a single-trace report of that rank: every stage
-- ($stage NULL, $mapping NULL), no share floor ($min_share 0), the
-- verdict floor $min_dur_ns (recorded with the copy), the overlap
-- fingerprint computed there ($overlap_fp NULL).
INSERT INTO overlap_row_store
SELECT r.run_id, r.rank, r.* EXCLUDE (run_id, rank)
FROM _overlap_rows_for($run, $mapping, $rank, $stage, $min_share, $min_dur_ns, $overlap_fp, $runs) r
