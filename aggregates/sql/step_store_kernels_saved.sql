-- step_store_kernels_saved: step_store_kernels.sql for runs whose saved
-- per-kernel overlap is current (the step save's batches), through
-- _step_kernels_saved, which does not bind the overlap's computation.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once.
INSERT INTO step_kernel_store
SELECT * FROM _step_kernels_saved($run, runs := $runs)
