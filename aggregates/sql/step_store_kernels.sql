-- step_store_kernels: compute step_kernels_for($run) into step_kernel_store.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
INSERT INTO step_kernel_store
SELECT * FROM step_kernels_for($run, runs := $runs)
