-- fusion_sweep_drop_hits: drop fusion_sweep_hits.sql's temporary table
-- from the connection once aggregates/fusion_sweep.go's save is done.
DROP TABLE IF EXISTS temp.main._fusion_sweep_hits
