-- launch_store_kernels: compute the launch overhead per rank, stage and
-- kernel short name of run $run (_launch_kernels_for, by rank) into
-- launch_kernel_store.
-- Parameters: $run, or with $runs (a list of run ids, $run NULL) every run
-- listed at once (aggregates.FinishPerRun).
INSERT INTO launch_kernel_store
SELECT * FROM _launch_kernels_for($run, by_rank := true, runs := $runs)
