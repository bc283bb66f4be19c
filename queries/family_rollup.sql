-- family_rollup: the "Families: gemm 41.2%, attention 18.0%, ..." line above
-- each kernel table.
--
-- One row per (stage, family) of run $run: the family's GPU time and its
-- share of the stage's summed kernel time (the kernel table's denominator),
-- summed over the selected rank(s). A short name counts for the family the
-- kernel table shows for it (that of its raw name with the most GPU time,
-- ties by the raw name), so the roll-up is exactly the kernel table's rows summed
-- by family; 'unclassified' when the classifier has not run. Sorted by stage
-- (prefill, decode, mixed, unknown, others by name), GPU time descending,
-- family.
--
-- Parameters: $run; $rank (NULL = every rank); $stage (NULL = every stage).
--
-- Columns: stage, family, gpu_ns, launches, stage_kernel_ns (the stage's
-- summed kernel time), share_pct (100 * gpu_ns / stage_kernel_ns, 0 when
-- that is 0).
WITH per_name_id AS (
    SELECT stage, name_id, sum(dur_ns) AS ns, count(*) AS launches
    FROM kernels
    WHERE run_id = $run
      AND ($rank IS NULL OR rank = $rank)
      AND ($stage IS NULL OR stage = $stage)
    GROUP BY stage, name_id
),
per_short AS (
    SELECT p.stage, n.short_name,
           first(n.family ORDER BY p.ns DESC, n.name) AS family,
           sum(p.ns) AS ns, sum(p.launches) AS launches
    FROM per_name_id p
    JOIN kernel_names n USING (name_id)
    GROUP BY p.stage, n.short_name
),
per_family AS (
    SELECT stage, coalesce(family, 'unclassified') AS family,
           sum(ns)::BIGINT AS gpu_ns, sum(launches)::BIGINT AS launches
    FROM per_short
    GROUP BY ALL
)
SELECT stage, family, gpu_ns, launches,
       sum(gpu_ns) OVER (PARTITION BY stage)::BIGINT AS stage_kernel_ns,
       CASE WHEN sum(gpu_ns) OVER (PARTITION BY stage) > 0
            THEN gpu_ns::DOUBLE * 100 / (sum(gpu_ns) OVER (PARTITION BY stage))::DOUBLE
            ELSE 0 END AS share_pct
FROM per_family
ORDER BY CASE stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                    WHEN 'unknown' THEN 3 ELSE 4 END,
         stage, gpu_ns DESC, family
