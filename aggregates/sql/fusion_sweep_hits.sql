-- fusion_sweep_hits: the keyword hits (_fusion_hits: every kind, every
-- stage) of the kernel texts of rank $rank of run $run, kept in a
-- temporary table of the connection: fusion_sweep_roles.sql makes the
-- chain roles from them and fusion_store_rows.sql reads the fused and step
-- hits from them ($hits) instead of matching the texts again.
-- Parameters: $run, $rank.
CREATE OR REPLACE TEMP TABLE _fusion_sweep_hits AS
SELECT name_id, site_id, op_name, kind, id, step_no
FROM _fusion_hits($run, NULL, $rank, NULL)
