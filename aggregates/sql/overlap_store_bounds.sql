-- overlap_store_bounds: where the pieces of a group too large to sweep
-- whole end (aggregates/overlap_stream.go): the start and id of every
-- $n-th GPU event of overlap group $key of the runs whose overlap is being
-- saved, in start and id order (overlap_store_kernels.sql's order and
-- events). A piece is then read as the range between two of them, which
-- DuckDB narrows by the start alone in the scan, instead of the first $n
-- events after the last one read: that scanned and ranked every event of
-- the group left for each piece (1.68 M events in 26 pieces: 3.2-4.0 CPU-s).
-- Parameters: $key, $n, and $run, or with $runs (a list of run ids, $run
-- NULL) every run listed.
-- Columns: ts_ns, kernel_id.
SELECT ts_ns, kernel_id
FROM (SELECT k.ts_ns, k.kernel_id, row_number() OVER (ORDER BY k.ts_ns, k.kernel_id) AS place
      FROM kernels k
      JOIN kernel_names n USING (name_id)
      WHERE CASE WHEN $runs IS NULL THEN $run IS NULL OR k.run_id = $run ELSE _run_in(k.run_id, $runs) END
        AND _overlap_group(k.trace_id, k.stage, k.device) = $key)
WHERE place % $n = 0
ORDER BY place
