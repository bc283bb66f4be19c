-- triage_coverage: the "Attribution:" line of the triage header, and mapping
-- coverage in two-trace mode (triage.md sections 2 and 6).
--
-- One row per stage of run $run, then one total row (stage NULL): GPU time,
-- and how much of it has a Python site according to kernel_scope($run,
-- $mapping) (the kernel's own launch site in single-trace mode; the site
-- transferred from the mapping run in two-trace mode), split by how the
-- kernel's name found its scope.
--
-- Parameters:
--   $run      the timing run
--   $mapping  the mapping run, NULL in single-trace mode
--   $rank     one rank, NULL for every rank
--   $stage    one stage, NULL for every stage
--
-- Columns (ns):
--   kernel_ns    summed GPU time
--   sited_ns     part of it whose kernel has a site: attribution coverage
--                (single-trace), mapping coverage (two-trace)
--   exact_ns, base_ns, unmapped_ns
--                two-trace: part matched by exact short name, by unique
--                template-stripped name, not at all (0 in single-trace mode)
--   coverage_pct 100 * sited_ns / kernel_ns (0 when kernel_ns is 0)
-- Sorted by stage (prefill, decode, mixed, unknown, others by name), total last.
WITH scoped AS (
    SELECT k.stage, ks.match, ks.site_id IS NOT NULL AS sited, k.dur_ns
    FROM kernel_scope($run, $mapping) ks
    JOIN kernels k USING (kernel_id)
    WHERE ($rank IS NULL OR k.rank = $rank)
      AND ($stage IS NULL OR k.stage = $stage)
)
SELECT stage,
       sum(dur_ns)::BIGINT AS kernel_ns,
       coalesce(sum(dur_ns) FILTER (WHERE sited), 0)::BIGINT AS sited_ns,
       coalesce(sum(dur_ns) FILTER (WHERE match = 'exact'), 0)::BIGINT AS exact_ns,
       coalesce(sum(dur_ns) FILTER (WHERE match = 'base'), 0)::BIGINT AS base_ns,
       coalesce(sum(dur_ns) FILTER (WHERE match = 'unmapped'), 0)::BIGINT AS unmapped_ns,
       CASE WHEN sum(dur_ns) > 0
            THEN coalesce(sum(dur_ns) FILTER (WHERE sited), 0)::DOUBLE * 100 / sum(dur_ns)::DOUBLE
            ELSE 0 END AS coverage_pct
FROM scoped
GROUP BY GROUPING SETS ((stage), ())
ORDER BY grouping(stage),
         CASE stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                    WHEN 'unknown' THEN 3 ELSE 4 END,
         stage
