-- fusion_sweep_roles: the chain roles (_fusion_step_roles) of the kernel
-- texts of rank $rank of run $run, from their keyword hits
-- (fusion_sweep_hits.sql, run first on the same connection), each text
-- numbered (text, from 1), kept in a temporary table of the connection for
-- aggregates/fusion_sweep.go: fusion_sweep_kernels.sql reads the rank's
-- kernels with these numbers.
-- Parameters: $run, $rank.
CREATE OR REPLACE TEMP TABLE _fusion_sweep_roles AS
SELECT dense_rank() OVER (ORDER BY name_id, site_id NULLS FIRST, op_name NULLS FIRST) AS text, *
FROM _fusion_step_roles($run, $rank, hits := 'temp.main._fusion_sweep_hits')
