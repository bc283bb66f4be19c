-- known_paths: the overlap-catalog entries behind "Known path: <name>
-- (<framework>, <origin>)" on overlap-table rows.
--
-- The caller passes the overlap rows as two parallel lists: each row's
-- kernel short name and its dominant overlapping kernel's short name ('' or
-- NULL when it has none). An overlap entry is a known path of a row when one
-- of its keywords hits either kernel by the keyword matching of
-- sqllib/fusion.sql: the short name itself, or any
-- Python site or CPU op that kernels of that short name have in the stage
-- (the mapping run's in two-trace mode, as everywhere in the report). Each
-- row is looked up in its own stage ($stages), so one call serves the rows
-- of every stage of a report.
--
-- One row per (overlap row, entry), sorted by the row's position, then
-- entries of the run's own framework first, then FlashInfer's (a kernel
-- library any framework may call), then other serving frameworks' ("elsewhere":
-- the path exists there, not in this framework), each in catalog order.
--
-- Parameters:
--   $run, $mapping, $rank, $stage   as in fusion_matches.sql
--   $kernels     VARCHAR[]: the rows' kernel short names
--   $dominants   VARCHAR[]: the rows' dominant overlapping short names, same
--                length ('' or NULL for none)
--   $stages      VARCHAR[]: the rows' stages, same length ('' or NULL: $stage;
--                a row whose stage is then NULL or '' sees every stage)
--
-- Columns:
--   row_index    1-based position of the overlap row in $kernels
--   kernel, dominant
--   matched      kernel | dominant | both: which side a keyword hit
--   id, name, framework, origin, switch (NULL when unknown), sources, rationale
--   keywords     the entry's keywords that hit, sorted
--   elsewhere    the entry is another serving framework's: the run's framework
--                (or, when unknown, the session variable tracehouse_framework,
--                as in sqllib/fusion.sql) is known and is not the entry's, and
--                the entry is not FlashInfer's
WITH
_rows AS (
    SELECT row_index, kernel, dominant,
           nullif(coalesce(nullif(stage, ''), $stage), '') AS stage
    -- (the three lists zipped by one projection's unnests: joined by
    -- position they were two hash joins)
    FROM (SELECT unnest($kernels) AS kernel, unnest($dominants) AS dominant,
                 unnest($stages) AS stage, generate_subscripts($kernels, 1) AS row_index)
),
_names AS (
    -- (a name twice only hits twice: _matched's aggregates take each once)
    SELECT kernel AS short_name FROM _rows
    UNION ALL
    SELECT dominant FROM _rows WHERE dominant IS NOT NULL AND dominant <> ''
),
_name_ids AS (
    SELECT name_id, short_name FROM kernel_names
    WHERE short_name IN (SELECT short_name FROM _names)
),
_texts AS (
    -- a keyword hits a short name through the name itself (in any stage:
    -- stage NULL) ...
    SELECT NULL::VARCHAR AS stage, short_name, _fusion_compact(short_name) AS name_c,
           NULL::VARCHAR AS site_c, NULL::VARCHAR AS op_c
    FROM _names
    UNION ALL
    -- ... or through the site or CPU op of one of its kernels in the stage
    -- (_fusion_hits of sqllib/fusion.sql, for the rows' names only). Every
    -- stage of the names is read: _matched keeps a row's own stage's hits
    -- (a filter to the rows' stages here cost 0.7 of a demo trace's 8.7 ms)
    SELECT c.stage, n.short_name,
           _fusion_compact(n.short_name),
           _fusion_site_form(s.file, s.rel_path, s.line, s.func, s.display),
           _fusion_compact(c.op_name)
    FROM (
        -- single-trace: the kernels' own sites and CPU ops (op ids are
        -- nearly one per kernel: the kernels are joined to their ops as
        -- they are, and the texts made distinct once)
        SELECT DISTINCT k.stage, k.name_id, k.site_id, o.name AS op_name
        FROM kernels k
        LEFT JOIN cpu_ops o ON o.op_id = k.op_id
        WHERE $mapping IS NULL
          AND k.run_id = $run
          AND ($rank IS NULL OR k.rank = $rank)
          AND k.name_id IN (SELECT name_id FROM _name_ids)
        UNION ALL
        -- two-trace: those kernel_scope lends (_fusion_kernels)
        SELECT DISTINCT stage, name_id, site_id, op_name
        FROM _fusion_kernels($run, $mapping, $rank)
        WHERE $mapping IS NOT NULL
          AND name_id IN (SELECT name_id FROM _name_ids)
    ) c
    JOIN _name_ids n USING (name_id)
    LEFT JOIN sites s ON s.site_id = c.site_id
),
_hits AS (
    -- (one join with the keywords for both kinds of text: a name alone
    -- has no site or op, which never hit; a hit found twice is taken
    -- once by _matched)
    SELECT t.stage, t.short_name, kw.id, kw.keyword
    FROM _texts t
    JOIN catalog_keywords kw
      ON kw.kind = 'overlap' AND _fusion_kw_hit(t.name_c, t.site_c, t.op_c, kw.keyword_compact)
),
_matched AS (
    SELECT r.row_index, r.kernel, r.dominant, h.id,
           bool_or(h.short_name = r.kernel) AS by_kernel,
           bool_or(h.short_name = r.dominant) AS by_dominant,
           list_sort(list_distinct(list(h.keyword))) AS keywords
    FROM _rows r
    JOIN _hits h
      ON (h.short_name = r.kernel OR h.short_name = r.dominant)
     AND (h.stage IS NULL OR r.stage IS NULL OR h.stage = r.stage)
    GROUP BY r.row_index, r.kernel, r.dominant, h.id
),
_framework AS (
    SELECT coalesce(nullif(framework, 'unknown'), getvariable('tracehouse_framework')::VARCHAR) AS framework
    FROM runs WHERE run_id = $run
),
_entries AS (
    SELECT m.row_index, m.kernel, m.dominant, m.by_kernel, m.by_dominant, m.keywords,
           o.id, o.name, o.framework, o.origin, o.switch, o.sources, o.rationale, o.ordinal,
           coalesce(o.framework = f.framework, false) AS own,
           coalesce(o.framework <> f.framework AND o.framework <> 'flashinfer', false) AS elsewhere
    FROM _matched m
    JOIN overlap_catalog o USING (id)
    -- (at most one row: run_id is the runs' key)
    LEFT JOIN _framework f ON true
)
SELECT row_index, kernel, dominant,
       CASE WHEN by_kernel AND by_dominant THEN 'both'
            WHEN by_kernel THEN 'kernel' ELSE 'dominant' END AS matched,
       id, name, framework, origin, switch, sources, rationale, keywords, elsewhere
FROM _entries
ORDER BY row_index, NOT own, elsewhere, ordinal
