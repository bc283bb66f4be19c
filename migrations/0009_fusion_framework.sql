-- 0009_fusion_framework: a framework named by the user counts for traces
-- that do not say theirs (issue 9 item 1: `triage --framework F` used to
-- change only the report header).
--
-- Catalog statuses depend on whether a trace is of an entry's own framework
-- (_fusion_gates.own, migration 0005). A trace whose framework is `unknown`
-- now takes the session variable `tracehouse_framework` when it is set
-- (SET VARIABLE tracehouse_framework = 'sglang'; queries.Triage sets it on
-- its connection for --framework and resets it after); a trace that names
-- its framework always keeps it. Unset, nothing changes.
CREATE OR REPLACE MACRO _fusion_gates(run) AS TABLE
WITH _run AS (
    SELECT r.run_id, lower(r.model) AS model,
           coalesce(r.tp_size, (SELECT max(t.tp_rank) + 1 FROM traces t WHERE t.run_id = r.run_id)) AS tp
    FROM runs r
    WHERE r.run_id = run
)
SELECT t.trace_id, f.id,
       coalesce(coalesce(nullif(t.framework, 'unknown'), getvariable('tracehouse_framework')::VARCHAR)
                = f.framework, false) AS own,
       (len(f.models_any) = 0
          OR (r.model IS NOT NULL
              AND len(list_filter(f.models_any, lambda m: contains(r.model, lower(m)))) > 0))
       AND (r.model IS NULL
              OR len(list_filter(f.models_none, lambda m: contains(r.model, lower(m)))) = 0)
       AND (f.min_tp <= 1 OR coalesce(r.tp >= f.min_tp, false)) AS applies
FROM traces t
JOIN _run r ON r.run_id = t.run_id
CROSS JOIN fusion_catalog f;
