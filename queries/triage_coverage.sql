-- triage_coverage: the "Attribution:" line of the triage header, and mapping
-- coverage in two-trace mode.
--
-- One row per stage of run $run, then one total row (stage NULL): GPU time,
-- and how much of it has a Python site as kernel_scope($run, $mapping)
-- (sqllib/scope.sql) defines it (the kernel's own launch site in single-trace
-- mode; the site transferred from the mapping run in two-trace mode), split
-- by how the kernel's name found its scope.
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
--   exact_ns, cross_stage_ns, base_ns, unmapped_ns
--                two-trace: part matched by exact short name in the same
--                stage, in another stage of the mapping run (by exact or
--                template-stripped name: sqllib/scope.sql), by unique
--                template-stripped name, not at all (0 in single-trace mode)
--   replay_ns    single-trace: part without a site of its own but located
--                by the frame around its CUDA/HIP graph launch (kernel_scope's
--                'graph-replay'); not in sited_ns, which counts kernel sites
--   coverage_pct 100 * sited_ns / kernel_ns (0 when kernel_ns is 0)
-- Sorted by stage (prefill, decode, mixed, unknown, others by name), total last.
WITH scoped AS (
    -- kernel_scope($run, $mapping) (sqllib/scope.sql) as the sums below need
    -- it. Single-trace: each kernel's own site, or its graph launch's
    -- frame (equalities only, so DuckDB hashes the join; the trace's keeps
    -- the scan of launches to the run's traces: see kernel_sites.sql), read
    -- kernel by kernel (grouped first, its groups were summed again by
    -- stage below: a grouping that saved nothing).
    SELECT k.stage,
           CASE WHEN k.site_id IS NULL AND k.graph_launch AND l.site_id IS NOT NULL THEN 'graph-replay'
                ELSE 'self' END AS match,
           k.site_id IS NOT NULL AS sited,
           k.dur_ns
    FROM kernels k
    LEFT JOIN launches l
           ON l.launch_id = CASE WHEN k.graph_launch THEN k.launch_id END
          AND l.trace_id = k.trace_id
    WHERE $mapping IS NULL
      AND k.run_id = $run
      AND ($rank IS NULL OR k.rank = $rank)
      AND ($stage IS NULL OR k.stage = $stage)
    UNION ALL
    -- Two-trace: the name's name_scope row, applied to the kernels' sums per
    -- (stage, raw name) (see kernel_sites.sql).
    SELECT p.stage, coalesce(ns.match, 'unmapped') AS match, ns.site_id IS NOT NULL AS sited, p.dur_ns
    FROM (SELECT stage, name_id, sum(dur_ns) AS dur_ns
          FROM kernels
          WHERE $mapping IS NOT NULL
            AND run_id = $run
            AND ($rank IS NULL OR rank = $rank)
            AND ($stage IS NULL OR stage = $stage)
          GROUP BY stage, name_id) p
    LEFT JOIN (SELECT * FROM name_scope($run, $mapping) WHERE $mapping IS NOT NULL) ns
           ON ns.stage = p.stage AND ns.name_id = p.name_id
)
SELECT stage,
       coalesce(sum(dur_ns), 0)::BIGINT AS kernel_ns,
       coalesce(sum(dur_ns) FILTER (WHERE sited), 0)::BIGINT AS sited_ns,
       coalesce(sum(dur_ns) FILTER (WHERE match = 'exact'), 0)::BIGINT AS exact_ns,
       coalesce(sum(dur_ns) FILTER (WHERE match IN ('cross-stage', 'base-cross-stage')), 0)::BIGINT AS cross_stage_ns,
       coalesce(sum(dur_ns) FILTER (WHERE match = 'base'), 0)::BIGINT AS base_ns,
       coalesce(sum(dur_ns) FILTER (WHERE match = 'unmapped'), 0)::BIGINT AS unmapped_ns,
       coalesce(sum(dur_ns) FILTER (WHERE match = 'graph-replay'), 0)::BIGINT AS replay_ns,
       CASE WHEN sum(dur_ns) > 0
            THEN coalesce(sum(dur_ns) FILTER (WHERE sited), 0)::DOUBLE * 100 / sum(dur_ns)::DOUBLE
            ELSE 0 END AS coverage_pct
FROM scoped
GROUP BY GROUPING SETS ((stage), ())
ORDER BY grouping(stage),
         CASE stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                    WHEN 'unknown' THEN 3 ELSE 4 END,
         stage
