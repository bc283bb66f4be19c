-- fusion_sweep_drop_chains: drop the temporary table of chain occurrences
-- aggregates/fusion_sweep.go wrote (fusion_sweep_chains.sql) from the
-- connection once its save is done.
DROP TABLE IF EXISTS temp.main._fusion_swept
