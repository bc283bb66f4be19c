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
-- alternative (step_no from 1); overlap: an overlap entry's keyword (step_no 0)
SELECT 'fused' AS kind, f.id, 0 AS step_no, k.keyword,
       lower(k.keyword) AS keyword_lower,
       regexp_replace(lower(k.keyword), '[^a-z0-9]', '', 'g') AS keyword_compact
FROM fusion_catalog f, unnest(f.fused) AS k(keyword)
UNION ALL
SELECT 'step', s.id, s.step_no, k.keyword,
       lower(k.keyword),
       regexp_replace(lower(k.keyword), '[^a-z0-9]', '', 'g')
FROM fusion_catalog_steps s, unnest(s.keywords) AS k(keyword)
UNION ALL
SELECT 'overlap', o.id, 0, k.keyword,
       lower(k.keyword),
       regexp_replace(lower(k.keyword), '[^a-z0-9]', '', 'g')
FROM overlap_catalog o, unnest(o.keywords) AS k(keyword);

COMMENT ON VIEW catalog_keywords IS 'Every keyword of the installed fusion and overlap catalog entries.';
