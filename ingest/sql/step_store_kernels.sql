-- step_store_kernels: compute step_kernels_for($run) into step_kernel_store.
-- Parameters: $run.
INSERT INTO step_kernel_store
SELECT * FROM step_kernels_for($run)
