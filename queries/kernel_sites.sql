-- kernel_sites: the "Python location (site share)" and "CPU op" columns of
-- the kernel table (sites as sqllib/scope.sql lends them).
--
-- For each (stage, kernel short_name) of run $run, its two best Python
-- launch sites (most GPU time first), as kernel_scope($run, $mapping)
-- (sqllib/scope.sql) defines them: the kernels' own launch sites in
-- single-trace mode, the sites transferred from the mapping run in
-- two-trace mode (exact short name in the same stage, else a unique
-- template-stripped name, else unmapped).
-- A short name without any site gets one row with site_rank and location
-- NULL, so every (stage, short name) of the run appears.
--
-- Parameters:
--   $run      the run whose kernels are listed (the formal run in two-trace mode)
--   $mapping  the mapping run lending sites, NULL in single-trace mode
--   $rank     one rank, NULL for every rank
--   $stage    one stage, NULL for every stage
--
-- Columns:
--   match           self | graph-replay (single-trace; graph-replay when
--                   any of the name's time is located by graph launches) |
--                   exact | cross-stage | base |
--                   base-cross-stage | unmapped: how the name found its
--                   scope (one value per short name, since matching depends
--                   only on the name; see sqllib/scope.sql)
--   site_rank       1 or 2; NULL when the kernel has no site at all
--   location        `path:line func`, path trimmed to the framework-relative
--                   part (sites.rel_path); the raw frame name when the site
--                   has no file and line. Sites with one location are one.
--                   Single-trace mode: a kernel replayed by a CUDA/HIP graph
--                   (no launch site of its own) is located at the frame
--                   around its graph launch, as `graph replay @ <location>`
--   replay          the location is such a graph-replay frame
--   site_ns         GPU time of the kernel's launches from that location
--   kernel_ns       GPU time of the kernel (the site shares' denominator)
--   site_share_pct  100 * site_ns / kernel_ns
--   cpu_op          the most frequent cpu_op name among the kernel's launches
--                   from that location (ties by name); NULL when none
--   sites           number of distinct locations the kernel has
--   sited_ns        GPU time of the kernel that has any location
-- Sorted by stage (prefill, decode, mixed, unknown, others by name), short
-- name, site_rank.
WITH per_own_site AS (
    -- The big table shrinks first: one row per (stage, raw name, own launch
    -- site, CPU op name, graph-launch frame). (A CPU op's id is nearly one
    -- per kernel, so grouping by it before naming the ops did not shrink
    -- anything: the kernels are named as they are and grouped once.)
    SELECT k.stage, k.name_id, k.site_id, o.name AS op_name,
           CASE WHEN k.site_id IS NULL AND k.graph_launch THEN l.site_id END AS replay_site_id,
           sum(k.dur_ns) AS ns, count(*) AS launches
    FROM kernels k
    -- (equalities only, so DuckDB hashes it: "$mapping IS NULL AND
    -- k.graph_launch AND l.launch_id = k.launch_id" became a nested-loop
    -- join, 38 CPU s on a 1 M-kernel run. The trace's equality, implied by
    -- the launch's (trace_id is a launch_id's high half), lets the scan of
    -- launches skip every other trace's row groups: without it a run
    -- without graph launches, whose keys are all NULL, read the launches
    -- of every run, 1.5 M rows in a warehouse of 1,000 runs.)
    LEFT JOIN launches l
           ON l.launch_id = CASE WHEN $mapping IS NULL AND k.graph_launch THEN k.launch_id END
          AND l.trace_id = k.trace_id
    LEFT JOIN cpu_ops o ON o.op_id = k.op_id
    WHERE k.run_id = $run
      AND ($rank IS NULL OR k.rank = $rank)
      AND ($stage IS NULL OR k.stage = $stage)
    GROUP BY ALL
),
per_site_op AS (
    -- kernel_scope($run, $mapping), applied to the groups instead of the
    -- kernels (same result, one pass over `kernels` instead of three): the
    -- own site and op in single-trace mode, the name's name_scope row in
    -- two-trace mode. kernel_sites_test.go checks the two agree. A graph
    -- replay without a site of its own takes its graph launch's frame.
    -- Single-trace, a group is one row as it is (its own site, or its
    -- replay site when it has none, and its op: no two groups meet), so
    -- that branch does not group again (0.3 of a demo trace's 7.3 ms).
    SELECT p.stage, p.name_id,
           CASE WHEN p.site_id IS NULL AND p.replay_site_id IS NOT NULL THEN 'graph-replay'
                ELSE 'self' END AS match,
           coalesce(p.site_id, p.replay_site_id) AS site_id,
           p.site_id IS NULL AND p.replay_site_id IS NOT NULL AS replay,
           p.op_name, p.ns, p.launches
    FROM per_own_site p
    WHERE $mapping IS NULL
    UNION ALL
    SELECT p.stage, p.name_id, coalesce(ns.match, 'unmapped') AS match, ns.site_id, false AS replay,
           ns.op_name, sum(p.ns) AS ns, sum(p.launches) AS launches
    FROM per_own_site p
    LEFT JOIN (SELECT * FROM name_scope($run, $mapping) WHERE $mapping IS NOT NULL) ns
           ON ns.stage = p.stage AND ns.name_id = p.name_id
    WHERE $mapping IS NOT NULL
    GROUP BY ALL
),
located AS (
    SELECT p.stage, n.short_name, p.match, p.op_name, p.ns, p.launches, p.replay,
           CASE WHEN p.site_id IS NULL THEN NULL ELSE
               CASE WHEN p.replay THEN 'graph replay @ ' ELSE '' END ||
               CASE WHEN s.line IS NOT NULL AND coalesce(s.rel_path, s.file) IS NOT NULL
                    THEN coalesce(s.rel_path, s.file) || ':' || s.line || coalesce(' ' || s.func, '')
                    ELSE s.name END END AS location
    FROM per_site_op p
    JOIN kernel_names n USING (name_id)
    LEFT JOIN sites s USING (site_id)
),
per_name AS (
    SELECT stage, short_name,
           min(match) AS match,
           sum(ns)::BIGINT AS kernel_ns,
           coalesce(sum(ns) FILTER (WHERE location IS NOT NULL), 0)::BIGINT AS sited_ns,
           len(list_distinct(list(location))) AS sites
    FROM located
    GROUP BY stage, short_name
),
per_location AS (
    -- each location's GPU time, and its most frequent CPU op (ties by
    -- name): the launches of each op summed first, then both read from
    -- those sums in one grouping
    SELECT stage, short_name, location, sum(ns)::BIGINT AS site_ns,
           first(op_name ORDER BY launches DESC, op_name) FILTER (WHERE op_name IS NOT NULL) AS cpu_op
    FROM (
        SELECT stage, short_name, location, op_name, sum(ns) AS ns, sum(launches) AS launches
        FROM located
        WHERE location IS NOT NULL
        GROUP BY stage, short_name, location, op_name
    )
    GROUP BY stage, short_name, location
),
best AS (
    SELECT *,
           row_number() OVER (PARTITION BY stage, short_name
                              ORDER BY site_ns DESC, location) AS site_rank
    FROM per_location
    QUALIFY site_rank <= 2
)
SELECT n.stage, n.short_name, n.match, b.site_rank, b.location,
       coalesce(b.site_ns, 0)::BIGINT AS site_ns, n.kernel_ns,
       CASE WHEN n.kernel_ns > 0 AND b.site_ns IS NOT NULL
            THEN b.site_ns::DOUBLE * 100 / n.kernel_ns::DOUBLE
            ELSE 0 END AS site_share_pct,
       b.cpu_op, n.sites, n.sited_ns,
       coalesce(starts_with(b.location, 'graph replay @ '), false) AS replay
FROM per_name n
LEFT JOIN best b USING (stage, short_name)
ORDER BY CASE n.stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                      WHEN 'unknown' THEN 3 ELSE 4 END,
         n.stage, n.short_name, b.site_rank
