-- straggler_sites: per stage, collective kernel and Python site, the rank
-- that arrives last most often, the summed wait and the arrival skew
-- (sqllib/straggler.sql, straggler_sites), over every rank of the run.
--
-- Columns:
--   stage
--   kernel        the collective kernel's short name
--   site          its Python site (NULL: none)
--   collectives, steps, ranks, last_rank, last, wait_ns, skew_p50_ns,
--   skew_max_ns   straggler_sites's
-- Sorted by stage (prefill, decode, mixed, unknown, others by name), then
-- the summed wait, longest first (ties by kernel, site, then the raw name
-- and the site's text: rows are per raw name and site, and two raw names
-- of one short name, or two sites of one display, would otherwise come in
-- the order their rows were stored).
--
-- Parameters: $run; $stage (NULL = every stage).
SELECT g.stage, n.short_name AS kernel, s.display AS site,
       g.collectives, g.steps, g.ranks, g.last_rank, g.last, g.wait_ns, g.skew_p50_ns, g.skew_max_ns
FROM straggler_sites($run) g
JOIN kernel_names n ON n.name_id = g.name_id
LEFT JOIN sites s ON s.site_id = g.site_id
WHERE $stage IS NULL OR g.stage = $stage
ORDER BY CASE g.stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                      WHEN 'unknown' THEN 3 ELSE 4 END,
         g.stage, g.wait_ns DESC, n.short_name, s.display NULLS FIRST, n.name, s.name
