-- step_store_clear_kernels: drop the saved per-step kernel rows of run $run.
-- Parameters: $run.
DELETE FROM step_kernel_store WHERE run_id = $run
