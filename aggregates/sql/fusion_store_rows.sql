-- fusion_store_rows: save the fuse-pattern rows (_fusion_matches_for, the
-- rows queries/fusion_matches.sql reads) of run $run's rank $rank, or of
-- every rank of the runs $runs at once ($run and $rank NULL), each rank's
-- rows those of a single-trace report of that rank: every stage
-- ($stage NULL, $mapping NULL), no share floor ($min_share 0). $chains,
-- when not NULL, names the table of the rank's chain occurrences
-- aggregates/fusion_sweep.go found (_fusion_related's `chains`), $hits the
-- table of the rank's keyword hits it saved (`hits`).
INSERT INTO fusion_match_store
SELECT r.run_id, r.rank, r.* EXCLUDE (run_id, rank)
FROM _fusion_matches_for($run, $mapping, $rank, $stage, $min_share, $runs, chains := $chains, hits := $hits) r
