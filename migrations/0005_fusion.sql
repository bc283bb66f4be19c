-- 0005_fusion: matching the fusion and overlap catalog (spec/catalog.md
-- sections 2 and 3) against a run's kernels, in SQL.
--
-- These are helpers for queries/fusion_matches.sql, fusion_similarity.sql
-- and known_paths.sql; users may call them for ad hoc questions too. They
-- read the catalog tables of 0003 (filled by catalog.Install) and the
-- Python-scope transfer of 0004 (kernel_scope), so single-trace and
-- two-trace reports give a kernel the same site everywhere.
--
-- Keyword matching (catalog.md section 2): a keyword hits a kernel when it is
-- a case-insensitive substring of the kernel's short name, its Python site
-- or its CPU op, or when its letters-and-digits-only form is a substring of
-- the same form of one of those. The second test implies the first (removing
-- characters from both sides keeps a substring a substring), so only the
-- compact forms are compared; the catalog loader rejects keywords whose
-- compact form is empty. The site is matched as `file:line func` and as its
-- display `func @ file:line`, where file is the framework-relative path
-- (sites.rel_path) when known: install prefixes such as
-- /root/.cache/... or /opt/venv/... would otherwise hit `cache` or `v`.
-- Keywords are matched once per distinct (name, site, op) of the run, not
-- once per kernel.
--
-- Chain matching, per (trace, rank, device, stream) in stream order (start
-- time, then kernel_id):
--   * a kernel's position counts every GPU event of the stream, of any stage
--     and whether related or not, so "at most max_between kernels apart" is
--     measured on what really ran there; all steps of one occurrence share a
--     stage;
--   * an occurrence is k kernels p1 < p2 < ... < pk (positions) where pi
--     fills step i (ordered entries) or the kernels fill the k steps in some
--     order (unordered entries), with p(i+1) - p(i) - 1 <= max_between and
--     start(i+1) - end(i) <= max_gap_ns (overlap, e.g. PDL, is a gap <= 0);
--   * a kernel matching one of the entry's `fused` keywords never fills one
--     of its steps (a fused kernel is not a split step);
--   * candidate occurrences are built by a recursive CTE bounded by the chain
--     length: each extends its last kernel by an equi-join on the positions
--     last+1 .. last+max_between+1, so no pairwise interval join is formed;
--   * one kernel belongs to at most one occurrence of an entry: candidates
--     are chosen greedily, tightest first (fewest positions spanned), then
--     leftmost, then by kernel ids. Candidates can only share a kernel when
--     their position spans overlap, so the greedy pass runs separately on
--     each island of overlapping spans (found with window functions), as a
--     list_reduce fold over the island's few candidates; no loop over events.
--
-- Gates, per trace (catalog.md section 2.3):
--   framework  an entry applies to its own framework's traces as
--              `opportunity` / `already fused`, and to every other trace as
--              `elsewhere` (a split chain that another framework fuses). A
--              trace whose framework is unknown is never "own": it can only
--              get `elsewhere` rows.
--   models     models_any: one token must be a case-insensitive substring of
--              runs.model; an unknown model never passes a non-empty
--              models_any (it cannot be shown to match). models_none: no
--              token may be a substring; an unknown model passes.
--   min_tp     compared with the run's TP size: runs.tp_size, else the
--              largest traces.tp_rank + 1 of the run (a lower bound the files
--              prove). When neither is known only entries with min_tp <= 1
--              apply.
--   min_share  applied by the queries to the summed row, not here.

-- _fusion_compact(s): the letters-and-digits-only, lower-case form keywords
-- and kernel texts are compared in (the same expression as catalog_keywords).
CREATE MACRO _fusion_compact(s) AS regexp_replace(lower(s), '[^a-z0-9]', '', 'g');

-- _fusion_kernels(run, mapping, rnk): one row per GPU event of run `run`
-- (only rank `rnk` unless it is NULL), with the Python scope reports use:
-- its own launch site and CPU op when `mapping` is NULL, the mapping run's
-- when it is set (kernel_scope of 0004). Columns:
--   kernel_id, trace_id, rank, stage, name_id, ts_ns, dur_ns  as in kernels
--   end_ns        ts_ns + dur_ns
--   dev, strm     device and stream, NULL as -1 so they can key a join
--   site_id       the scope's site (NULL = unmapped / no Python frame)
--   op_name       the scope's CPU op name (NULL = none)
CREATE MACRO _fusion_kernels(run, mapping, rnk) AS TABLE
SELECT k.kernel_id, k.trace_id, k.rank, k.stage, k.name_id, k.ts_ns, k.dur_ns,
       k.ts_ns + k.dur_ns AS end_ns,
       coalesce(k.device, -1) AS dev,
       coalesce(k.stream, -1) AS strm,
       s.site_id, s.op_name
FROM kernels k
JOIN kernel_scope(run, mapping) s USING (kernel_id)
WHERE k.run_id = run
  AND (rnk IS NULL OR k.rank = rnk);

-- _fusion_hits(run, mapping, rnk, stg): which catalog keywords hit which
-- kernel texts. One row per distinct (name_id, site_id, op_name) of the
-- run's GPU events in stage `stg` (every stage when NULL or '') and per
-- (kind, id, step_no) of catalog_keywords it hits. Columns:
--   name_id, site_id, op_name   the kernel text (join with IS NOT DISTINCT FROM)
--   kind      fused | step | overlap, as in catalog_keywords
--   id        the fusion or overlap entry
--   step_no   0 for fused and overlap keywords, else the chain step
--   keywords  the keywords of that (kind, id, step_no) that hit, sorted
CREATE MACRO _fusion_hits(run, mapping, rnk, stg) AS TABLE
WITH _texts AS (
    SELECT c.name_id, c.site_id, c.op_name,
           _fusion_compact(n.short_name) AS name_c,
           _fusion_compact(CASE WHEN s.file IS NULL THEN s.display
                                ELSE coalesce(s.rel_path, s.file) || ':' || coalesce(s.line::VARCHAR, '') || ' ' || coalesce(s.func, '')
                           END) AS site_c,
           _fusion_compact(s.display) AS display_c,
           _fusion_compact(c.op_name) AS op_c
    FROM (SELECT DISTINCT name_id, site_id, op_name
          FROM _fusion_kernels(run, mapping, rnk)
          WHERE stg IS NULL OR stg = '' OR stage = stg) c
    JOIN kernel_names n USING (name_id)
    LEFT JOIN sites s ON s.site_id = c.site_id
)
SELECT t.name_id, t.site_id, t.op_name, kw.kind, kw.id, kw.step_no,
       list_sort(list(DISTINCT kw.keyword)) AS keywords
FROM _texts t
JOIN catalog_keywords kw
  ON kw.keyword_compact <> ''
 AND (contains(t.name_c, kw.keyword_compact)
      OR contains(coalesce(t.site_c, ''), kw.keyword_compact)
      OR contains(coalesce(t.display_c, ''), kw.keyword_compact)
      OR contains(coalesce(t.op_c, ''), kw.keyword_compact))
GROUP BY t.name_id, t.site_id, t.op_name, kw.kind, kw.id, kw.step_no;

-- _fusion_gates(run): one row per (trace of run `run`, fusion entry) with the
-- entry's non-share gates for that trace (see the header). Columns:
--   trace_id, id
--   own       the trace is of the entry's framework: chain matches are
--             `opportunity` and fused kernels `already fused`; otherwise
--             chain matches are `elsewhere` and fused kernels give no row
--   applies   the models and min_tp gates pass
CREATE MACRO _fusion_gates(run) AS TABLE
WITH _run AS (
    SELECT r.run_id, lower(r.model) AS model,
           coalesce(r.tp_size, (SELECT max(t.tp_rank) + 1 FROM traces t WHERE t.run_id = r.run_id)) AS tp
    FROM runs r
    WHERE r.run_id = run
)
SELECT t.trace_id, f.id,
       coalesce(t.framework = f.framework, false) AS own,
       (len(f.models_any) = 0
          OR (r.model IS NOT NULL
              AND len(list_filter(f.models_any, lambda m: contains(r.model, lower(m)))) > 0))
       AND (r.model IS NULL
              OR len(list_filter(f.models_none, lambda m: contains(r.model, lower(m)))) = 0)
       AND (f.min_tp <= 1 OR coalesce(r.tp >= f.min_tp, false)) AS applies
FROM traces t
JOIN _run r ON r.run_id = t.run_id
CROSS JOIN fusion_catalog f;

-- _fusion_related(run, mapping, rnk, stg, variants): every kernel that makes
-- a fusion entry's row, for entries whose models/min_tp gates pass. One row
-- per (entry, variant, kernel). Columns:
--   kind        'fused': a kernel of stage `stg` matching one of the
--               entry's fused keywords on a trace of the entry's own
--               framework (variant 0, occurrence = the kernel itself);
--               'chain': a kernel of an accepted chain occurrence, in a
--               (trace, stage, device) where no kernel matches the entry's
--               fused keywords (there the fused path runs: the entry is
--               `already fused` on its own framework and silent elsewhere)
--   id          fusion entry
--   variant     0 = the entry's whole chain. When `variants` is true, also
--               v = 1..steps for entries of 3 or more steps: the chain with
--               step v left out (the "all but one step" near misses of the
--               similarity note); steps are renumbered, order kept
--   status      opportunity | elsewhere | already fused (see _fusion_gates)
--   occurrence  the kernel_id of the occurrence's first kernel (unique per
--               entry and variant, since a kernel is in one occurrence)
--   step        the (renumbered) step the kernel filled; 0 for fused
--   kernel_id, trace_id, rank, stage, name_id, site_id, op_name, dur_ns
--               the kernel, with its report scope
CREATE MACRO _fusion_related(run, mapping, rnk, stg, variants) AS TABLE
WITH RECURSIVE
_k AS MATERIALIZED (
    SELECT *,
           row_number() OVER (PARTITION BY trace_id, rank, dev, strm ORDER BY ts_ns, kernel_id) AS pos
    FROM _fusion_kernels(run, mapping, rnk)
),
_kh AS MATERIALIZED (
    -- kernels of the stage with the keyword hits of their text, gated
    SELECT k.*, h.kind, h.id, h.step_no, g.own
    FROM _k k
    JOIN _fusion_hits(run, mapping, rnk, stg) h
      ON h.name_id = k.name_id
     AND h.site_id IS NOT DISTINCT FROM k.site_id
     AND h.op_name IS NOT DISTINCT FROM k.op_name
    JOIN _fusion_gates(run) g ON g.trace_id = k.trace_id AND g.id = h.id
    WHERE (stg IS NULL OR stg = '' OR k.stage = stg)
      AND h.kind IN ('fused', 'step')
      AND g.applies
),
_variants AS (
    SELECT f.id, 0 AS variant, f.steps AS nsteps, f.ordered, f.max_between, f.max_gap_ns
    FROM fusion_catalog f
    WHERE f.steps > 0
    UNION ALL
    SELECT f.id, unnest(range(1, f.steps + 1)), f.steps - 1, f.ordered, f.max_between, f.max_gap_ns
    FROM fusion_catalog f
    WHERE variants AND f.steps >= 3
),
_roles AS MATERIALIZED (
    -- one row per (kernel, entry, variant, step it can fill); kernels
    -- matching the entry's fused keywords cannot fill any step
    SELECT s.kernel_id, s.trace_id, s.rank, s.dev, s.strm, s.stage, s.pos, s.ts_ns, s.end_ns,
           s.id, v.variant,
           s.step_no - CASE WHEN v.variant > 0 AND s.step_no > v.variant THEN 1 ELSE 0 END AS step,
           v.nsteps, v.ordered, v.max_between, v.max_gap_ns
    FROM _kh s
    JOIN _variants v ON v.id = s.id AND s.step_no <> v.variant
    WHERE s.kind = 'step'
      AND NOT EXISTS (SELECT 1 FROM _kh f
                      WHERE f.kind = 'fused' AND f.id = s.id AND f.kernel_id = s.kernel_id)
),
_paths AS (
    -- partial occurrences: n kernels in position order filling n distinct steps
    SELECT trace_id, rank, dev, strm, stage, id, variant, nsteps, ordered, max_between, max_gap_ns,
           pos AS first_pos, pos AS last_pos, end_ns AS last_end_ns,
           1 AS n, (1::BIGINT << step) AS used, [kernel_id] AS kernels, [step] AS steps
    FROM _roles
    WHERE NOT ordered OR step = 1
    UNION ALL
    SELECT p.trace_id, p.rank, p.dev, p.strm, p.stage, p.id, p.variant, p.nsteps, p.ordered,
           p.max_between, p.max_gap_ns,
           p.first_pos, r.pos, r.end_ns,
           p.n + 1, p.used | (1::BIGINT << r.step),
           list_append(p.kernels, r.kernel_id), list_append(p.steps, r.step)
    FROM (SELECT *, unnest(range(last_pos + 1, last_pos + max_between + 2)) AS next_pos
          FROM _paths
          WHERE n < nsteps) p
    JOIN _roles r
      ON r.trace_id = p.trace_id AND r.rank = p.rank AND r.dev = p.dev AND r.strm = p.strm
     AND r.id = p.id AND r.variant = p.variant AND r.pos = p.next_pos
    WHERE r.stage = p.stage
      AND r.ts_ns - p.last_end_ns <= p.max_gap_ns
      AND CASE WHEN p.ordered THEN r.step = p.n + 1
               ELSE (p.used & (1::BIGINT << r.step)) = 0 END
),
_candidates AS (
    -- complete occurrences; an unordered chain can fill its steps from the
    -- same kernels in several ways, which is one candidate
    SELECT trace_id, rank, dev, strm, stage, id, variant, kernels, min(steps) AS steps,
           min(first_pos) AS first_pos, max(last_pos) AS last_pos
    FROM _paths
    WHERE n = nsteps
    GROUP BY trace_id, rank, dev, strm, stage, id, variant, kernels
),
_spans AS (
    SELECT *,
           max(last_pos) OVER (PARTITION BY trace_id, rank, dev, strm, id, variant
                               ORDER BY first_pos, last_pos, kernels
                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_last_pos
    FROM _candidates
),
_islands AS (
    -- an island starts where no earlier candidate's span reaches
    SELECT *,
           sum(CASE WHEN prev_last_pos IS NULL OR first_pos > prev_last_pos THEN 1 ELSE 0 END)
               OVER (PARTITION BY trace_id, rank, dev, strm, id, variant
                     ORDER BY first_pos, last_pos, kernels
                     ROWS UNBOUNDED PRECEDING) AS island
    FROM _spans
),
_ranked AS (
    SELECT *,
           row_number() OVER (PARTITION BY trace_id, rank, dev, strm, id, variant, island
                              ORDER BY last_pos - first_pos, first_pos, kernels) AS j
    FROM _islands
),
_folded AS (
    -- greedy pass: each candidate is [-j, kernel ids...]; it is taken when
    -- none of its kernels is in the accumulator, which then gains -j and
    -- them. The leading [0] is a neutral first accumulator (list_reduce
    -- starts from the first element).
    SELECT trace_id, rank, dev, strm, id, variant, island,
           list_reduce(list_prepend([0::BIGINT], list(list_prepend(-j, kernels) ORDER BY j)),
                       lambda acc, x: CASE WHEN list_has_any(acc, x[2:]) THEN acc
                                           ELSE list_concat(acc, x) END) AS taken
    FROM _ranked
    GROUP BY trace_id, rank, dev, strm, id, variant, island
),
_accepted AS (
    SELECT c.id, c.variant, c.kernels, c.steps
    FROM _ranked c
    JOIN _folded f USING (trace_id, rank, dev, strm, id, variant, island)
    WHERE list_contains(f.taken, -c.j)
),
_chain_kernels AS (
    SELECT a.id, a.variant, a.kernels[1] AS occurrence,
           unnest(a.kernels) AS kernel_id, unnest(a.steps) AS step
    FROM _accepted a
),
_fused_groups AS (
    -- (trace, stage, device) groups where the entry's fused path runs
    SELECT DISTINCT trace_id, stage, dev, id FROM _kh WHERE kind = 'fused'
)
SELECT 'chain' AS kind, c.id, c.variant,
       CASE WHEN g.own THEN 'opportunity' ELSE 'elsewhere' END AS status,
       c.occurrence, c.step,
       k.kernel_id, k.trace_id, k.rank, k.stage, k.name_id, k.site_id, k.op_name, k.dur_ns
FROM _chain_kernels c
JOIN _k k USING (kernel_id)
JOIN _fusion_gates(run) g ON g.trace_id = k.trace_id AND g.id = c.id
-- where the fused path runs, the entry is `already fused` (own framework) or
-- says nothing (another framework already runs an equivalent kernel); split
-- chains left in that group are another shape's path or keyword noise
WHERE NOT EXISTS (SELECT 1 FROM _fused_groups fg
                  WHERE fg.trace_id = k.trace_id AND fg.stage = k.stage
                    AND fg.dev = k.dev AND fg.id = c.id)
UNION ALL
SELECT 'fused', f.id, 0, 'already fused', f.kernel_id, 0,
       f.kernel_id, f.trace_id, f.rank, f.stage, f.name_id, f.site_id, f.op_name, f.dur_ns
FROM _kh f
WHERE f.kind = 'fused' AND f.own;
