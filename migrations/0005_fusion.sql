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
_entries AS (
    SELECT id, ordinal, steps, ordered, max_between, max_gap_ns FROM fusion_catalog
),
_kall AS MATERIALIZED (
    SELECT * FROM _fusion_kernels(run, mapping, rnk)
),
_gates AS MATERIALIZED (
    SELECT * FROM _fusion_gates(run)
),
_texts AS MATERIALIZED (
    -- the run's distinct kernel texts (name, site, op), numbered
    SELECT name_id, site_id, op_name, row_number() OVER () AS text_id
    FROM (SELECT DISTINCT name_id, site_id, op_name FROM _kall)
),
_streams AS (
    SELECT trace_id, rank, dev, strm, row_number() OVER () AS sid
    FROM (SELECT DISTINCT trace_id, rank, dev, strm FROM _kall)
),
_stages AS (
    SELECT stage, row_number() OVER () AS sc
    FROM (SELECT DISTINCT stage FROM _kall)
),
_k AS MATERIALIZED (
    -- every GPU event with its place in its stream, spos = stream * 2^32 +
    -- position (from 1, in start order), and what the next N events of the
    -- same stream are, N being the catalog's largest max_between + 1: nx
    -- packs their text and stage (text_id * 2^16 + stage code), nx_ts holds
    -- their starts. Adjacency is read from these lists, never from a join
    -- of the kernels with themselves.
    SELECT k.kernel_id, k.trace_id, k.rank, k.dev, k.stage, k.name_id, k.site_id, k.op_name,
           k.ts_ns, k.end_ns, k.dur_ns, t.text_id, c.sc,
           (s.sid << 32) | row_number() OVER w AS spos,
           list((t.text_id << 16) | c.sc) OVER wn AS nx,
           list(k.ts_ns) OVER wn AS nx_ts
    FROM _kall k
    JOIN _texts t
      ON t.name_id = k.name_id
     AND t.site_id IS NOT DISTINCT FROM k.site_id
     AND t.op_name IS NOT DISTINCT FROM k.op_name
    JOIN _streams s USING (trace_id, rank, dev, strm)
    JOIN _stages c USING (stage)
    WINDOW w AS (PARTITION BY s.sid ORDER BY k.ts_ns, k.kernel_id),
           wn AS (PARTITION BY s.sid ORDER BY k.ts_ns, k.kernel_id
                  ROWS BETWEEN 1 FOLLOWING
                       AND (SELECT coalesce(max(max_between), 0) + 1 FROM fusion_catalog) FOLLOWING)
),
_hits AS MATERIALIZED (
    -- keyword hits per text, for entries whose models/min_tp gates pass
    -- (the same for every trace of a run; the framework only changes the
    -- status)
    SELECT t.text_id, h.kind, e.ordinal, h.step_no
    FROM _fusion_hits(run, mapping, rnk, stg) h
    JOIN _texts t
      ON t.name_id = h.name_id
     AND t.site_id IS NOT DISTINCT FROM h.site_id
     AND t.op_name IS NOT DISTINCT FROM h.op_name
    JOIN _entries e USING (id)
    WHERE h.kind IN ('fused', 'step')
      AND h.id IN (SELECT id FROM _gates WHERE applies)
),
_variants AS (
    SELECT ordinal, 0 AS variant, steps AS nsteps, ordered, max_between, max_gap_ns
    FROM _entries
    WHERE steps > 0
    UNION ALL
    SELECT ordinal, unnest(range(1, steps + 1)), steps - 1, ordered, max_between, max_gap_ns
    FROM _entries
    -- ekey keeps the variant in 4 bits
    WHERE variants AND steps BETWEEN 3 AND 15
),
_text_roles AS MATERIALIZED (
    -- which step of which (entry, variant) a text can fill, ekey = ordinal
    -- * 16 + variant; a text matching one of the entry's fused keywords
    -- fills none (a fused kernel is not a split step)
    SELECT h.text_id, (v.ordinal * 16 + v.variant)::BIGINT AS ekey,
           h.step_no - CASE WHEN v.variant > 0 AND h.step_no > v.variant THEN 1 ELSE 0 END AS step,
           v.nsteps, v.ordered, v.max_between, v.max_gap_ns
    FROM _hits h
    JOIN _variants v ON v.ordinal = h.ordinal AND h.step_no <> v.variant
    WHERE h.kind = 'step'
      AND NOT EXISTS (SELECT 1 FROM _hits f
                      WHERE f.kind = 'fused' AND f.ordinal = h.ordinal AND f.text_id = h.text_id)
),
_text_pairs AS MATERIALIZED (
    -- which text can follow which in an entry's chain: the second fills the
    -- next step (ordered entries) or another step (unordered; the recursion
    -- keeps a path's steps distinct)
    SELECT a.ekey, a.text_id AS from_text, a.step AS from_step, b.text_id AS to_text, b.step AS to_step,
           a.ordered, a.max_between, a.max_gap_ns
    FROM _text_roles a
    JOIN _text_roles b
      ON b.ekey = a.ekey
     AND CASE WHEN a.ordered THEN b.step = a.step + 1 ELSE b.step <> a.step END
    WHERE a.nsteps > 1
),
_neighbours AS (
    -- each kernel of the stage whose text can start a link, with each of
    -- the next N kernels of its stream (d places later) of the same stage
    SELECT spos, text_id, end_ns, d, nxv >> 16 AS next_text, nts
    FROM (SELECT k.spos, k.text_id, k.end_ns, k.sc,
                 unnest(k.nx) AS nxv, unnest(k.nx_ts) AS nts, unnest(range(1, len(k.nx) + 1)) AS d
          FROM _k k
          SEMI JOIN _text_pairs p ON p.from_text = k.text_id
          WHERE stg IS NULL OR stg = '' OR k.stage = stg)
    WHERE nxv & 65535 = sc
),
_edges AS MATERIALIZED (
    -- links of an occurrence: the kernel d places later fills a following
    -- step, with at most max_between kernels between (d <= max_between + 1)
    -- and starting at most max_gap_ns after the first one ends
    SELECT p.ekey, n.spos AS from_spos, p.from_step, n.spos + n.d AS to_spos, p.to_step, p.ordered
    FROM _neighbours n
    JOIN _text_pairs p ON p.from_text = n.text_id AND p.to_text = n.next_text
    WHERE n.d <= p.max_between + 1
      AND n.nts - n.end_ns <= p.max_gap_ns
),
_paths AS (
    -- partial occurrences: n kernels (as spos) in stream order filling n
    -- distinct steps, walked along _edges; as many iterations as the
    -- longest chain has steps. Starts: kernels with a link from the first
    -- step (any step when unordered), and every kernel of a one-step chain.
    SELECT ekey, last_spos, last_step, 1 AS n, (1::BIGINT << last_step) AS used, [last_spos] AS kernels
    FROM (SELECT DISTINCT ekey, from_spos AS last_spos, from_step AS last_step
          FROM _edges
          WHERE NOT ordered OR from_step = 1
          UNION ALL
          SELECT r.ekey, k.spos, r.step
          FROM _k k
          JOIN _text_roles r USING (text_id)
          WHERE r.nsteps = 1 AND (stg IS NULL OR stg = '' OR k.stage = stg))
    UNION ALL
    SELECT p.ekey, e.to_spos, e.to_step, p.n + 1,
           p.used | (1::BIGINT << e.to_step), list_append(p.kernels, e.to_spos)
    FROM _paths p
    JOIN _edges e ON e.ekey = p.ekey AND e.from_spos = p.last_spos AND e.from_step = p.last_step
    WHERE p.n < (SELECT v.nsteps FROM _variants v WHERE v.ordinal * 16 + v.variant = p.ekey)
      AND (e.ordered OR (p.used & (1::BIGINT << e.to_step)) = 0)
),
_candidates AS MATERIALIZED (
    -- complete occurrences; an unordered chain can fill its steps from the
    -- same kernels in several ways, which is one candidate. cand is an
    -- arbitrary unique id: identity only, never order.
    SELECT row_number() OVER () AS cand, ekey, kernels,
           kernels[1] AS first_spos, kernels[-1] AS last_spos
    FROM (SELECT DISTINCT p.ekey, p.kernels
          FROM _paths p
          JOIN _variants v ON v.ordinal * 16 + v.variant = p.ekey
          WHERE p.n = v.nsteps)
),
_islands AS MATERIALIZED (
    -- an island starts where no earlier candidate's span reaches (spans
    -- never cross streams); island = ekey * 2^40 + its number; j = the
    -- greedy order inside it: tightest first (fewest positions spanned),
    -- then leftmost, then by the second and third kernel (a fixed hash of
    -- the kernels for the rare tie left among chains of 5+ steps)
    SELECT *,
           row_number() OVER (PARTITION BY island
                              ORDER BY last_spos - first_spos, first_spos, kernels[2], kernels[3],
                                       hash(kernels)) AS j
    FROM (SELECT cand, ekey, kernels, first_spos, last_spos,
                 (ekey << 40)
                 | sum(CASE WHEN prev_last IS NULL OR first_spos > prev_last THEN 1 ELSE 0 END)
                       OVER (PARTITION BY ekey ORDER BY first_spos, last_spos ROWS UNBOUNDED PRECEDING) AS island
          FROM (SELECT *,
                       max(last_spos) OVER (PARTITION BY ekey ORDER BY first_spos, last_spos
                                            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_last
                FROM _candidates))
),
_greedy AS (
    -- the greedy pass, one candidate of every island per iteration (as many
    -- iterations as the largest island has candidates, usually 1 or 2): the
    -- first is taken; a later one is taken when none of its kernels is in
    -- the island's claimed list, which then gains them
    SELECT island, j, cand, true AS taken, kernels AS claimed
    FROM _islands
    WHERE j = 1
    UNION ALL
    SELECT i.island, i.j, i.cand,
           NOT list_has_any(g.claimed, i.kernels),
           CASE WHEN list_has_any(g.claimed, i.kernels) THEN g.claimed
                ELSE list_concat(g.claimed, i.kernels) END
    FROM _greedy g
    JOIN _islands i ON i.island = g.island AND i.j = g.j + 1
),
_chain_kernels AS (
    -- step: the kernel's place in the occurrence, which is its chain step
    -- for ordered entries (stream order for unordered ones)
    SELECT e.id, i.ekey % 16 AS variant, i.kernels[1] AS occurrence_spos,
           unnest(i.kernels) AS spos, generate_subscripts(i.kernels, 1) AS step
    FROM _islands i
    JOIN _greedy g USING (cand)
    JOIN _entries e ON e.ordinal = i.ekey // 16
    WHERE g.taken
),
_chain AS MATERIALIZED (
    -- the accepted occurrences' kernels (materialized so the planner, which
    -- cannot estimate the recursive CTEs, does not join the gates first)
    SELECT c.id, c.variant, c.step, o.kernel_id AS occurrence,
           k.kernel_id, k.trace_id, k.rank, k.stage, k.dev, k.name_id, k.site_id, k.op_name, k.dur_ns
    FROM _chain_kernels c
    JOIN _k k ON k.spos = c.spos
    JOIN _k o ON o.spos = c.occurrence_spos
),
_fused AS MATERIALIZED (
    -- kernels of the stage running an entry's fused path
    SELECT k.*, e.id
    FROM _k k
    JOIN _hits h ON h.kind = 'fused' AND h.text_id = k.text_id
    JOIN _entries e USING (ordinal)
    WHERE stg IS NULL OR stg = '' OR k.stage = stg
),
_fused_groups AS (
    -- (trace, stage, device) groups where the entry's fused path runs
    SELECT DISTINCT trace_id, stage, dev, id FROM _fused
)
SELECT 'chain' AS kind, c.id, c.variant,
       CASE WHEN g.own THEN 'opportunity' ELSE 'elsewhere' END AS status,
       c.occurrence, c.step,
       c.kernel_id, c.trace_id, c.rank, c.stage, c.name_id, c.site_id, c.op_name, c.dur_ns
FROM _chain c
JOIN _gates g ON g.trace_id = c.trace_id AND g.id = c.id
-- where the fused path runs, the entry is `already fused` (own framework) or
-- says nothing (another framework already runs an equivalent kernel); split
-- chains left in that group are another shape's path or keyword noise
WHERE NOT EXISTS (SELECT 1 FROM _fused_groups fg
                  WHERE fg.trace_id = c.trace_id AND fg.stage = c.stage
                    AND fg.dev = c.dev AND fg.id = c.id)
UNION ALL
SELECT 'fused', f.id, 0, 'already fused', f.kernel_id, 0,
       f.kernel_id, f.trace_id, f.rank, f.stage, f.name_id, f.site_id, f.op_name, f.dur_ns
FROM _fused f
JOIN _gates g ON g.trace_id = f.trace_id AND g.id = f.id
WHERE g.own;
