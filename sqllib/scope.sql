-- scope: the Python scope (launch site and CPU op) each kernel is reported
-- under: its own launch site in single-trace mode,
-- the one a mapping run lends in two-trace mode.
--
-- Users often capture the eager mapping run on one stage only (prefill) and
-- the graph formal run on another (decode), so name_scope falls back
-- across stages. It tries, in order:
--   'exact'             same short_name, same stage
--   'cross-stage'       same short_name in another stage of the mapping run
--   'base'              same template-stripped name, identifying one short
--                       name among the mapping run's kernels of that stage
--   'base-cross-stage'  same template-stripped name, identifying one short
--                       name over the whole mapping run (no kernel of that
--                       stage has the base name)
--   'unmapped'          none of these; no prefix or substring matching.
-- A match made in another stage takes the mapped name's dominant site and
-- CPU op over the whole mapping run; a same-stage match those of the stage.

-- name_scope(timing_run, mapping_run): how each (stage, kernel name) of the
-- timing run borrows a Python scope from the mapping run. One row per
-- (stage, name_id) present in the timing run. Columns:
--   stage, name_id, short_name  the timing run's kernel name
--   match        'exact', 'cross-stage', 'base', 'base-cross-stage' or
--                'unmapped', as above
--   mapped_short_name  the mapping run's short_name that lent the scope
--   site_id      the mapped name's dominant site in the mapping run (its
--                stage, or the whole run for a cross-stage match): the
--                site with the most GPU time among its kernels, ties by the
--                site's text (sites.name: not site_id, which follows the
--                order sites were first ingested); NULL when none of them
--                has a site
--   op_name      at that site, the cpu_op name with the most GPU time, ties
--                by name; NULL when none
-- Timing never comes from the mapping run: this is names and sites only.
CREATE MACRO name_scope(timing_run, mapping_run) AS TABLE
WITH _mk AS (
    SELECT k.stage, n.short_name, n.base_name, k.site_id, o.name AS op_name, k.dur_ns
    FROM kernels k
    JOIN kernel_names n USING (name_id)
    LEFT JOIN cpu_ops o ON o.op_id = k.op_id
    WHERE k.run_id = mapping_run
),
_m_names AS (
    SELECT DISTINCT stage, short_name, base_name FROM _mk
),
_m_base AS (
    -- base names that identify exactly one short name in their stage (one
    -- distinct short name: its least is its greatest)
    SELECT stage, base_name, min(short_name) AS short_name
    FROM _m_names
    GROUP BY stage, base_name
    HAVING min(short_name) = max(short_name)
),
_m_short AS (
    -- the mapping run's short names, each with the stages it has
    SELECT short_name, list(stage) AS stages
    FROM _m_names
    GROUP BY short_name
),
_m_base_any AS (
    -- base names that identify exactly one short name over the whole
    -- mapping run
    SELECT base_name, min(short_name) AS short_name
    FROM _m_names
    GROUP BY base_name
    HAVING min(short_name) = max(short_name)
),
_m_site_time AS (
    SELECT m.stage, m.short_name, m.site_id, any_value(s.name) AS site, sum(m.dur_ns) AS ns
    FROM _mk m
    JOIN sites s USING (site_id)
    GROUP BY m.stage, m.short_name, m.site_id
),
_m_site AS (
    -- per stage; stage NULL: over every stage of the mapping run
    SELECT stage, short_name, first(site_id ORDER BY ns DESC, site) AS site_id
    FROM _m_site_time
    GROUP BY stage, short_name
    UNION ALL
    SELECT NULL, short_name, first(site_id ORDER BY ns DESC, site)
    FROM (SELECT short_name, site_id, any_value(site) AS site, sum(ns) AS ns FROM _m_site_time GROUP BY short_name, site_id)
    GROUP BY short_name
),
_m_op AS (
    -- at the dominant site, the CPU op with the most GPU time (same stage
    -- keying as _m_site)
    SELECT s.stage, s.short_name, first(k.op_name ORDER BY k.ns DESC, k.op_name) AS op_name
    FROM _m_site s
    JOIN (
        SELECT stage, short_name, site_id, op_name, sum(dur_ns) AS ns
        FROM _mk
        WHERE op_name IS NOT NULL AND site_id IS NOT NULL
        GROUP BY ALL
    ) k ON k.short_name = s.short_name AND k.site_id = s.site_id
       AND (s.stage IS NULL OR k.stage = s.stage)
    GROUP BY s.stage, s.short_name
),
_t_names AS (
    SELECT DISTINCT k.stage, k.name_id, n.short_name, n.base_name
    FROM kernels k
    JOIN kernel_names n USING (name_id)
    WHERE k.run_id = timing_run
),
_matched AS (
    -- (whether the name is in the same stage of the mapping run is read
    -- from the stages listed with it: one join serves the stage's match and
    -- the whole run's. A base name unique over the whole run that the
    -- stage has is unique in the stage: 'base' takes it first, so
    -- 'base-cross-stage' needs no test of the stage)
    SELECT t.stage, t.name_id, t.short_name,
           CASE WHEN coalesce(list_contains(ea.stages, t.stage), false) THEN 'exact'
                WHEN ea.short_name IS NOT NULL THEN 'cross-stage'
                WHEN b.short_name IS NOT NULL THEN 'base'
                WHEN ba.short_name IS NOT NULL THEN 'base-cross-stage'
                ELSE 'unmapped' END AS match,
           coalesce(ea.short_name, b.short_name, ba.short_name) AS mapped_short_name
    FROM _t_names t
    LEFT JOIN _m_short ea
           ON ea.short_name = t.short_name
    LEFT JOIN _m_base b
           ON b.stage = t.stage AND b.base_name = t.base_name
    LEFT JOIN _m_base_any ba
           ON ba.base_name = t.base_name
)
SELECT m.stage, m.name_id, m.short_name, m.match, m.mapped_short_name,
       s.site_id, o.op_name
FROM _matched m
LEFT JOIN _m_site s
       ON s.short_name = m.mapped_short_name
      AND s.stage IS NOT DISTINCT FROM
          CASE WHEN m.match IN ('exact', 'base') THEN m.stage END
LEFT JOIN _m_op o
       ON o.short_name = m.mapped_short_name
      AND o.stage IS NOT DISTINCT FROM
          CASE WHEN m.match IN ('exact', 'base') THEN m.stage END;

-- kernel_scope(timing_run, mapping_run): the Python scope every report uses
-- for each GPU event of `timing_run`. One row per kernel. Columns:
--   kernel_id, stage, name_id
--   match     single-trace (mapping_run NULL): 'self' (the kernel's own
--             launch site), or 'graph-replay' for a kernel replayed by a
--             CUDA/HIP graph, which has no launch site of its own and takes
--             the Python frame around its graph launch; two-trace:
--             name_scope's match
--   site_id   single-trace: kernels.site_id, else the graph launch's site;
--             two-trace: the mapped name's dominant site in the mapping
--             run. NULL = unmapped/unresolved.
--   op_name   single-trace: the cpu_op that launched it (kernels.op_id);
--             two-trace: the dominant cpu_op at the mapped site
-- Mapping coverage (triage header) = sum(dur_ns) of rows with a site_id over
-- sum(dur_ns) of all rows (see queries/triage_coverage.sql).
CREATE MACRO kernel_scope(timing_run, mapping_run) AS TABLE
SELECT k.kernel_id, k.stage, k.name_id,
       CASE WHEN mapping_run IS NOT NULL THEN coalesce(ns.match, 'unmapped')
            WHEN k.site_id IS NULL AND l.site_id IS NOT NULL THEN 'graph-replay'
            ELSE 'self' END AS match,
       CASE WHEN mapping_run IS NULL THEN coalesce(k.site_id, l.site_id) ELSE ns.site_id END AS site_id,
       CASE WHEN mapping_run IS NULL THEN o.name ELSE ns.op_name END AS op_name
FROM kernels k
LEFT JOIN cpu_ops o ON mapping_run IS NULL AND o.op_id = k.op_id
LEFT JOIN launches l
       ON mapping_run IS NULL AND k.graph_launch AND k.site_id IS NULL AND l.launch_id = k.launch_id
LEFT JOIN name_scope(timing_run, mapping_run) ns
       ON ns.stage = k.stage AND ns.name_id = k.name_id
WHERE k.run_id = timing_run;

-- _name_scope_none(timing_run, mapping_run): name_scope's columns and no
-- row. A query whose two-trace branch joins name_scope under "mapping IS
-- NOT NULL" (queries/kernel_sites.sql, triage_coverage.sql) names it in
-- place of name_scope when it runs in single-trace mode, where that branch
-- is empty anyway (queries.singleTrace): DuckDB binds a macro's whole
-- body even where a constant filter then drops it, and binding name_scope
-- was 3-4 ms of CPU of each such query in a triage.
CREATE MACRO _name_scope_none(timing_run, mapping_run) AS TABLE
SELECT NULL::VARCHAR AS stage, NULL::INTEGER AS name_id, NULL::VARCHAR AS short_name,
       NULL::VARCHAR AS match, NULL::VARCHAR AS mapped_short_name,
       NULL::INTEGER AS site_id, NULL::VARCHAR AS op_name
WHERE false;

-- scope_names(timing_run, mapping_run), run ids: how each (stage, kernel name) of the
-- timing run finds its Python scope in the mapping run (name_scope's columns).
CREATE MACRO scope_names(timing_run, mapping_run) AS TABLE
SELECT * FROM name_scope(timing_run, mapping_run);

-- scope_kernels(timing_run, mapping_run := NULL), run ids: the Python scope every
-- report uses for each kernel of the timing run (kernel_scope's columns):
-- its own launch site when mapping_run is NULL, else the transferred one.
CREATE MACRO scope_kernels(timing_run, mapping_run := NULL) AS TABLE
SELECT * FROM kernel_scope(timing_run, mapping_run);

COMMENT ON MACRO TABLE scope_names IS 'How each (stage, kernel name) of a timing run finds its Python scope in a mapping run (run ids).';
COMMENT ON MACRO TABLE scope_kernels IS 'The Python scope of each kernel of a timing run: its own launch site, or the one a mapping run lends (run ids).';
COMMENT ON MACRO TABLE name_scope IS 'Internal (run_id only): use scope_names.';
COMMENT ON MACRO TABLE kernel_scope IS 'Internal (run_id only): use scope_kernels.';
