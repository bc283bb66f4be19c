-- fusion_sweep_chains: the temporary table aggregates/fusion_sweep.go
-- fills with the accepted chain occurrences' kernels of one rank, which
-- fusion_store_rows.sql then names as _fusion_matches_for's `chains`
-- (columns as _fusion_related names them, sqllib/fusion.sql).
CREATE OR REPLACE TEMP TABLE _fusion_swept (id VARCHAR, variant INTEGER, step BIGINT, occurrence BIGINT, kernel_id BIGINT)
