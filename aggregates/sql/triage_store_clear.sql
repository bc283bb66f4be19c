-- triage_store_clear: drop the rows of run $run's saved triage report
-- (triage_store), after its record (triage_store_forget.sql).
DELETE FROM triage_store WHERE run_id = $run
