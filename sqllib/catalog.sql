-- catalog: the installed fusion and overlap catalog (tables of migration
-- 0003, written by ingest.InstallCatalog) in the forms matching uses.
--
-- Keywords are stored as written. Matching is case-insensitive substring on
-- a kernel's short name, its site and its CPU op, and also on the letters-
-- and-digits-only form of both sides:
--   regexp_replace(lower(x), '[^a-z0-9]', '', 'g')

-- catalog_keywords: one row per keyword of the installed catalog, with the
-- two forms matching compares (sqllib/fusion.sql): lower-cased, and
-- lower-cased with every character but a-z and 0-9 removed. Matching joins
-- kernels to this view so the normalisation is written once, here.
-- Columns:
--   kind             fused | step | overlap (below)
--   id               the fusion or overlap entry
--   step_no          0 for fused and overlap keywords, else the chain step
--   keyword          as the catalog wrote it
--   keyword_lower    lower-cased
--   keyword_compact  lower-cased, only a-z and 0-9 kept
CREATE VIEW catalog_keywords AS
-- fused: a fusion's fused keyword (step_no 0); step: a chain step's
-- alternative (step_no from 1); overlap: an overlap entry's keyword (step_no 0).
-- The lists are unnested in a projection: unnested as a lateral table
-- function, each became a correlated join that DuckDB planned and ran in
-- every statement reading the view (the fuse-pattern query's keyword
-- matching, known_paths).
SELECT 'fused' AS kind, id, 0 AS step_no, keyword,
       lower(keyword) AS keyword_lower,
       regexp_replace(lower(keyword), '[^a-z0-9]', '', 'g') AS keyword_compact
FROM (SELECT id, unnest(fused) AS keyword FROM fusion_catalog)
UNION ALL
SELECT 'step', id, step_no, keyword,
       lower(keyword),
       regexp_replace(lower(keyword), '[^a-z0-9]', '', 'g')
FROM (SELECT id, step_no, unnest(keywords) AS keyword FROM fusion_catalog_steps)
UNION ALL
SELECT 'overlap', id, 0, keyword,
       lower(keyword),
       regexp_replace(lower(keyword), '[^a-z0-9]', '', 'g')
FROM (SELECT id, unnest(keywords) AS keyword FROM overlap_catalog);

COMMENT ON VIEW catalog_keywords IS 'Every keyword of the installed fusion and overlap catalog entries.';
