-- triage_store_forget: first step of saving run $run's triage report (see
-- aggregates.SaveTriage): drop its record, so that no reader takes the
-- rows while they are replaced.
DELETE FROM triage_store_runs WHERE run_id = $run
