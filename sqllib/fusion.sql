-- fusion: matching the fusion and overlap catalog against a run's kernels, in SQL.
--
-- These are helpers for queries/fusion_matches.sql, fusion_similarity.sql
-- and known_paths.sql; users may call them for ad hoc questions too. They
-- read the catalog tables (filled by ingest.InstallCatalog; catalog_keywords
-- of the catalog module) and the Python-scope transfer of the scope module
-- (kernel_scope) in two-trace mode, so a kernel has the same site in every
-- table of a report.
--
--
-- Keyword matching: a keyword hits a kernel when it is
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
-- once per kernel; _fusion_hits matches each distinct compact form of the
-- names, sites and ops once (_fusion_form_hits): texts share their site's
-- and op's forms, and matching every text against every keyword row cost
-- about 1 CPU-s per 45 k texts. Directory names are part of the site: a broad keyword
-- such as `quant` hits every GEMM launched from layers/quantization/ (or
-- from vLLM's default_unquantized_gemm), which is the catalog's to narrow.
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
--   * links first: for each kernel whose text can fill a step, the kernels
--     1 .. max_between + 1 places later on its stream are found by an
--     equi-join on (stream, position + d) (never a pairwise interval join),
--     and kept where their text fills a following step (_text_pairs, worked
--     out once per distinct text, not per kernel) within max_gap_ns;
--   * candidate occurrences walk those links in a recursive CTE bounded by
--     the chain length;
--   * one kernel belongs to at most one occurrence of an entry: candidates
--     are chosen greedily, tightest first (fewest positions spanned), then
--     leftmost, then by their kernels' positions in turn. Only candidates
--     sharing a kernel need the pass; they can only share one when their
--     spans overlap, so they are cut into islands of overlapping spans
--     (window functions) and the pass is a fold over each island's
--     candidates, sorted in a list (list_reduce). No loop over events
--     anywhere.
--   * the finish finds a large rank's occurrences by this rule in Go
--     (aggregates/fusion_sweep.go, one stream read once) and hands them to
--     _fusion_related as `chains`: this walk holds every kernel of the rank
--     in state DuckDB cannot spill. Tests hold the two equal.
--
-- Gates, per trace:
--   framework  an entry applies to its own framework's traces as
--              `opportunity` / `already fused`, and to every other trace as
--              `elsewhere` (a split chain that another framework fuses). A
--              trace whose framework is unknown is never "own" (it can only
--              get `elsewhere` rows) unless --framework names one (see
--              _fusion_gates).
--   models     models_any: one token must be a case-insensitive substring of
--              runs.model; an unknown model never passes a non-empty
--              models_any (it cannot be shown to match). models_none: no
--              token may be a substring; an unknown model passes.
--   min_tp     compared with the run's TP size: runs.tp_size, else the
--              largest traces.tp_rank + 1 of the run (a lower bound the files
--              prove). When neither is known only entries with min_tp <= 1
--              apply.
--   min_share  applied by the queries to the summed row, not here.
--
-- Batches (aggregates.Finish saves the fuse-pattern rows of many runs and ranks
-- in one statement): the helpers take a list of run ids, `runs :=`, in
-- place of `run` and `rnk` (every rank of those runs), and carry each
-- kernel's run_id; queries/fusion_matches.sql keys every step by (run,
-- rank) when given `$runs`. A batch gives each rank exactly the rows a
-- report of that rank alone gives: the last tie-break of _fusion_related
-- compares the kernels' positions within one stream (never across the
-- batch's stream numbering), and each occurrence and fused kernel checks its own trace's
-- gate (the same for every trace of a run).

-- _fusion_compact(s): the letters-and-digits-only, lower-case form keywords
-- and kernel texts are compared in (the same expression as catalog_keywords).
CREATE MACRO _fusion_compact(s) AS regexp_replace(lower(s), '[^a-z0-9]', '', 'g');

-- _fusion_kernels(run, mapping, rnk, runs := NULL): one row per GPU event
-- of run `run` (only rank `rnk` unless it is NULL), or of every run listed
-- in `runs` (single-trace only), with the Python scope reports use: its
-- own launch site and CPU op when `mapping` is NULL, the mapping run's
-- when it is set (kernel_scope). The single-trace branch is kernel_scope's
-- 'self' mode written out, so a single-trace report does not pay for the
-- two-trace name transfer (the branch whose condition on `mapping` is
-- false is pruned when the query is planned). Columns:
--   kernel_id, trace_id, rank, stage, name_id, ts_ns, dur_ns  as in kernels
--   end_ns        ts_ns + dur_ns
--   dev, strm     device and stream, NULL as -1 so they can key a join
--   stream_pos    as in kernels
--   site_id       the scope's site (NULL = unmapped / no Python frame)
--   op_name       the scope's CPU op name (NULL = none)
--   run_id        as in kernels
CREATE MACRO _fusion_kernels(run, mapping, rnk, runs := NULL) AS TABLE
SELECT k.kernel_id, k.trace_id, k.rank, k.stage, k.name_id, k.ts_ns, k.dur_ns,
       k.ts_ns + k.dur_ns AS end_ns,
       coalesce(k.device, -1) AS dev,
       coalesce(k.stream, -1) AS strm,
       k.stream_pos,
       k.site_id, o.name AS op_name, k.run_id
FROM kernels k
LEFT JOIN cpu_ops o ON o.op_id = k.op_id
WHERE mapping IS NULL
  AND CASE WHEN runs IS NULL THEN k.run_id = run AND (rnk IS NULL OR k.rank = rnk)
           ELSE _run_in(k.run_id, runs) END
UNION ALL
SELECT k.kernel_id, k.trace_id, k.rank, k.stage, k.name_id, k.ts_ns, k.dur_ns,
       k.ts_ns + k.dur_ns,
       coalesce(k.device, -1),
       coalesce(k.stream, -1),
       k.stream_pos,
       s.site_id, s.op_name, k.run_id
FROM kernels k
JOIN kernel_scope(run, mapping) s USING (kernel_id)
WHERE mapping IS NOT NULL
  AND k.run_id = run
  AND (rnk IS NULL OR k.rank = rnk);

-- _fusion_kernels_none(run, mapping, rnk, runs := NULL): _fusion_kernels's
-- columns and no row, which a query whose two-trace branch reads
-- _fusion_kernels under "mapping IS NOT NULL" (queries/known_paths.sql)
-- names in its place in single-trace mode (see _name_scope_none): binding
-- _fusion_kernels's two-trace branch was 4-5 ms of CPU of known_paths.
CREATE MACRO _fusion_kernels_none(run, mapping, rnk, runs := NULL) AS TABLE
SELECT NULL::BIGINT AS kernel_id, NULL::INTEGER AS trace_id, NULL::INTEGER AS rank,
       NULL::VARCHAR AS stage, NULL::INTEGER AS name_id, NULL::BIGINT AS ts_ns,
       NULL::BIGINT AS dur_ns, NULL::BIGINT AS end_ns, NULL::INTEGER AS dev,
       NULL::BIGINT AS strm, NULL::BIGINT AS stream_pos, NULL::INTEGER AS site_id,
       NULL::VARCHAR AS op_name, NULL::INTEGER AS run_id
WHERE false;

-- _fusion_site_form(file, rel_path, line, func, display): a site (columns
-- of `sites`) as keywords see it: the compact form of `file:line func`, with
-- the framework-relative path, then that of its display `func @ file:line`
-- (for a site without a file, nn.Module or built-in, both are the display);
-- NULL for no site. The two are joined by a space, which no compact keyword
-- contains, so a keyword never matches across them.
CREATE MACRO _fusion_site_form(file, rel_path, line, func, display) AS
    _fusion_compact(CASE WHEN file IS NULL THEN display
                         ELSE coalesce(rel_path, file) || ':' || coalesce(line::VARCHAR, '') || ' '
                              || coalesce(func, '') END)
    || ' ' || _fusion_compact(display);

-- _fusion_kw_hit(name_c, site_c, op_c, keyword_compact): the matching rule
-- of this file's header, on compact forms computed once per kernel text:
-- the keyword's compact form is a substring of the short name's, the
-- site's (_fusion_site_form) or the CPU op's. NULL site or op never hit.
CREATE MACRO _fusion_kw_hit(name_c, site_c, op_c, keyword_compact) AS
    keyword_compact <> ''
    AND (contains(name_c, keyword_compact)
         OR coalesce(contains(site_c, keyword_compact), false)
         OR coalesce(contains(op_c, keyword_compact), false));

-- _fusion_form_hits(forms, kinds): which compact keyword forms of
-- catalog_keywords of the kinds listed hit which of the compact forms
-- listed (a name's, a site's or an op's; NULLs never hit), by
-- _fusion_kw_hit: a text is hit by a keyword when one of its three forms
-- is (_fusion_hits and _fusion_related join the texts back on each form).
-- Columns: form, keyword_compact.
CREATE MACRO _fusion_form_hits(forms, kinds) AS TABLE
SELECT f.form, k.keyword_compact
FROM (SELECT unnest(forms) AS form) f
JOIN (SELECT DISTINCT keyword_compact FROM catalog_keywords WHERE list_contains(kinds, kind)) k
  ON _fusion_kw_hit(f.form, NULL, NULL, k.keyword_compact);

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
WITH _texts AS MATERIALIZED (
    SELECT c.name_id, c.site_id, c.op_name,
           _fusion_compact(n.short_name) AS name_c,
           _fusion_site_form(s.file, s.rel_path, s.line, s.func, s.display) AS site_c,
           _fusion_compact(c.op_name) AS op_c
    FROM (SELECT DISTINCT name_id, site_id, op_name
          FROM _fusion_kernels(run, mapping, rnk)
          WHERE stg IS NULL OR stg = '' OR stage = stg) c
    JOIN kernel_names n USING (name_id)
    LEFT JOIN sites s ON s.site_id = c.site_id
),
_forms AS MATERIALIZED (
    -- every keyword form that hits a form of the texts
    SELECT * FROM _fusion_form_hits((SELECT list(DISTINCT f) FROM (SELECT name_c FROM _texts UNION ALL
                                                                   SELECT site_c FROM _texts UNION ALL
                                                                   SELECT op_c FROM _texts) x(f)),
                                    ['fused', 'step', 'overlap'])
),
_text_kw AS (
    -- _fusion_kw_hit's three tests, each an equi-join on a form
    SELECT t.name_id, t.site_id, t.op_name, h.keyword_compact FROM _texts t JOIN _forms h ON h.form = t.name_c
    UNION
    SELECT t.name_id, t.site_id, t.op_name, h.keyword_compact FROM _texts t JOIN _forms h ON h.form = t.site_c
    UNION
    SELECT t.name_id, t.site_id, t.op_name, h.keyword_compact FROM _texts t JOIN _forms h ON h.form = t.op_c
)
SELECT t.name_id, t.site_id, t.op_name, kw.kind, kw.id, kw.step_no,
       list_sort(list(DISTINCT kw.keyword)) AS keywords
FROM _text_kw t
JOIN catalog_keywords kw USING (keyword_compact)
GROUP BY t.name_id, t.site_id, t.op_name, kw.kind, kw.id, kw.step_no;

-- _fusion_hits_table(hits): the table named hits, which holds
-- _fusion_hits's rows of one rank (every stage, no mapping) as
-- aggregates/fusion_sweep.go saves them (name_id, site_id, op_name, kind,
-- id, step_no), or no row when hits is NULL; for the `hits` argument of
-- _fusion_step_roles and _fusion_related.
CREATE MACRO _fusion_hits_table(hits) AS TABLE
SELECT * FROM query(CASE WHEN hits IS NULL
                         THEN 'SELECT NULL::INTEGER AS name_id, NULL::INTEGER AS site_id, NULL::VARCHAR AS op_name,
                                      NULL::VARCHAR AS kind, NULL::VARCHAR AS id, NULL::INTEGER AS step_no WHERE false'
                         ELSE 'SELECT name_id, site_id, op_name, kind, id, step_no FROM ' || hits END);

-- _fusion_gates(run, runs := NULL): one row per (trace of run `run`, or of
-- the runs listed in `runs`; fusion entry) with the entry's non-share gates
-- for that trace (see the header). Columns:
--   trace_id, id
--   own       the trace is of the entry's framework: chain matches are
--             `opportunity` and fused kernels `already fused`; otherwise
--             chain matches are `elsewhere` and fused kernels give no row.
--             A trace whose framework is `unknown` takes the session
--             variable `tracehouse_framework` when it is set (SET VARIABLE
--             tracehouse_framework = 'sglang'; queries.Triage sets it on its
--             connection for --framework and resets it after); a trace
--             that names its framework always keeps it
--   applies   the models and min_tp gates pass
CREATE MACRO _fusion_gates(run, runs := NULL) AS TABLE
WITH _run AS (
    -- the traces' TP ranks joined, not asked in a correlated subquery
    -- (which DuckDB plans as a delim join, several operators more)
    SELECT r.run_id, lower(r.model) AS model,
           coalesce(r.tp_size, t.tp) AS tp
    FROM runs r
    LEFT JOIN (SELECT run_id, max(tp_rank) + 1 AS tp FROM traces GROUP BY run_id) t USING (run_id)
    WHERE CASE WHEN runs IS NULL THEN r.run_id = run ELSE _run_in(r.run_id, runs) END
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

-- _fusion_step_roles(run, rnk, hits := NULL): which chain step of which
-- fusion entry each distinct kernel text (name, site, op) of rank rnk of
-- run `run` can fill, as _fusion_related's _text_roles says (variant 0): a
-- step keyword hits the text, the entry's models and min_tp gates pass,
-- and none of its fused keywords hits the text. The hits are
-- _fusion_hits's, or those of the table named hits (_fusion_hits_table).
-- aggregates/fusion_sweep.go walks the streams with it. Columns:
--   name_id, site_id, op_name   the text (join with IS NOT DISTINCT FROM)
--   id, step                    the entry and the step the text can fill
--   nsteps, ordered, max_between, max_gap_ns   the entry's, from fusion_catalog
CREATE MACRO _fusion_step_roles(run, rnk, hits := NULL) AS TABLE
WITH _h AS MATERIALIZED (
    SELECT name_id, site_id, op_name, kind, id, step_no FROM _fusion_hits(run, NULL, rnk, NULL)
    WHERE hits IS NULL
    UNION ALL
    SELECT name_id, site_id, op_name, kind, id, step_no FROM _fusion_hits_table(hits)
    WHERE hits IS NOT NULL
)
SELECT h.name_id, h.site_id, h.op_name, h.id, h.step_no AS step,
       f.steps AS nsteps, f.ordered, f.max_between, f.max_gap_ns
FROM _h h
JOIN fusion_catalog f USING (id)
WHERE h.kind = 'step' AND f.steps > 0
  AND h.id IN (SELECT id FROM _fusion_gates(run) WHERE applies)
  AND NOT EXISTS (SELECT 1 FROM _h x
                  WHERE x.kind = 'fused' AND x.id = h.id AND x.name_id = h.name_id
                    AND x.site_id IS NOT DISTINCT FROM h.site_id
                    AND x.op_name IS NOT DISTINCT FROM h.op_name);

-- _fusion_related(run, mapping, rnk, stg, variants, runs := NULL): every
-- kernel that makes a fusion entry's row, for entries whose models/min_tp
-- gates pass, of run `run` or of every run listed in `runs`. One row per
-- (entry, variant, kernel). Columns:
--   kind        'fused': a kernel of stage `stg` matching one of the
--               entry's fused keywords on a trace of the entry's own
--               framework (variant 0, occurrence = the kernel itself);
--               'chain': a kernel of an accepted chain occurrence, in a
--               (trace, stage, device) where no kernel matches the entry's
--               fused keywords (there the fused path runs: the entry is
--               `already fused` on its own framework and silent elsewhere)
--   id          fusion entry
--   variant     0 = the entry's whole chain. When `variants` is true, also
--               v = 1..steps for entries of 3 to 15 steps: the chain with
--               step v left out (the "all but one step" near misses of the
--               similarity note); steps are renumbered, order kept
--   status      opportunity | elsewhere | already fused (see _fusion_gates)
--   occurrence  the kernel_id of the occurrence's first kernel (unique per
--               entry and variant, since a kernel is in one occurrence)
--   step        the kernel's place in its occurrence, from 1: its chain
--               step (renumbered in a variant) for ordered entries, its
--               stream order for unordered ones; 0 for fused kernels
--   kernel_id, trace_id, rank, stage, name_id, site_id, op_name, dur_ns
--               the kernel, with its report scope
--   run_id      the kernel's run
--
-- chains, when set, names a table of the accepted chain occurrences'
-- kernels, one row each: id (the entry), variant (0), step (its place in
-- its occurrence, from 1), occurrence (the kernel_id of the occurrence's
-- first kernel) and kernel_id, found by the same rule in Go
-- (aggregates/fusion_sweep.go, which the finish uses for large ranks:
-- walking a stream here holds every kernel of the rank in memory, 700 MiB
-- for 1.7 M kernels, and that state does not spill); the stream walk above
-- is then left out. Only for one rank, no mapping, no variants. hits,
-- when set, names a table of the rank's keyword hits (_fusion_hits_table),
-- read instead of matching each text against the keywords again.
--
-- stgs, when set, is a list of stages: only kernels of those stages make
-- rows (with stg NULL), as the union of one call per stage would give
-- them: occurrences link kernels of one stage, and the fused path is
-- looked for per stage, so a stage's rows never depend on another's
-- kernels (queries/fusion_similarity.sql asks for several stages at once).
CREATE MACRO _fusion_related(run, mapping, rnk, stg, variants, runs := NULL, chains := NULL, hits := NULL, stgs := NULL) AS TABLE
WITH RECURSIVE
_entries AS (
    SELECT id, ordinal, steps, ordered, max_between, max_gap_ns FROM fusion_catalog
),
_gates AS MATERIALIZED (
    SELECT * FROM _fusion_gates(run, runs := runs)
),
_kall AS MATERIALIZED (
    SELECT * FROM _fusion_kernels(run, mapping, rnk, runs := runs)
    WHERE chains IS NULL OR hits IS NULL
    UNION ALL
    -- given chains and hits (one rank, no mapping), only the kernels a row
    -- can name: those of the chains and those whose text a fused keyword
    -- hits (compared by hash: a collision keeps one kernel more, which no
    -- join below matches); in query() so that the walk does not plan it
    SELECT * FROM query(CASE WHEN chains IS NULL OR hits IS NULL
                             THEN 'SELECT * FROM _fusion_kernels_none(NULL, NULL, NULL)'
                             ELSE 'SELECT * FROM _fusion_kernels(' || run || ', NULL, ' || rnk || ')
                                   WHERE kernel_id IN (SELECT kernel_id FROM ' || chains || ')
                                      OR hash(name_id, site_id, op_name)
                                         IN (SELECT hash(name_id, site_id, op_name) FROM ' || hits || ' WHERE kind = ''fused'')' END)
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
    -- every GPU event with its place in its stream: spos = stream * 2^32 +
    -- position (kernels.stream_pos, numbered at ingest: from 1, in start
    -- order), so "d places later on the same stream" is spos + d, and no
    -- such spos exists past the stream's end. text_id and sc give back the
    -- name, site, op and stage.
    SELECT k.kernel_id, k.trace_id, k.rank, k.dev, t.text_id, c.sc, k.ts_ns, k.dur_ns,
           (s.sid << 32) | k.stream_pos AS spos, k.run_id
    FROM _kall k
    JOIN _texts t
      ON t.name_id = k.name_id
     AND t.site_id IS NOT DISTINCT FROM k.site_id
     AND t.op_name IS NOT DISTINCT FROM k.op_name
    JOIN _streams s USING (trace_id, rank, dev, strm)
    JOIN _stages c USING (stage)
),
_in_stage AS (
    -- stage codes reports ask for
    SELECT sc FROM _stages
    WHERE (stg IS NULL OR stg = '' OR stage = stg)
      AND (stgs IS NULL OR list_contains(stgs, stage))
),
_hits AS MATERIALIZED (
    -- fused and step keyword hits per text, for entries whose models and
    -- min_tp gates pass (the same for every trace of a run; the framework
    -- only changes the status). Matched text by text here, on the compact
    -- forms, not through _fusion_form_hits as _fusion_hits does: with its
    -- forms, this statement of a rank given its chains (1 GB kernel-dense
    -- trace) ran out of the finish's 200 MiB in two finishes of four and
    -- was made again unbounded (590 MiB; bench/README.md, "Twenty-fifth
    -- figures"). With `hits`, _fusion_hits's rows of the rank read from
    -- that table instead (the finish's Go sweep saved them for its chain
    -- roles): the text-by-text match was half of that statement's time.
    SELECT DISTINCT t.text_id, kw.kind, e.ordinal, kw.step_no
    FROM (SELECT t.text_id,
                 _fusion_compact(n.short_name) AS name_c,
                 _fusion_site_form(s.file, s.rel_path, s.line, s.func, s.display) AS site_c,
                 _fusion_compact(t.op_name) AS op_c
          FROM _texts t
          JOIN kernel_names n USING (name_id)
          LEFT JOIN sites s ON s.site_id = t.site_id
          WHERE hits IS NULL) t
    JOIN catalog_keywords kw
      ON kw.kind IN ('fused', 'step')
     AND _fusion_kw_hit(t.name_c, t.site_c, t.op_c, kw.keyword_compact)
    JOIN _entries e USING (id)
    WHERE kw.id IN (SELECT id FROM _gates WHERE applies)
    UNION ALL
    SELECT DISTINCT t.text_id, h.kind, e.ordinal, h.step_no
    FROM _fusion_hits_table(hits) h
    JOIN _texts t
      ON t.name_id = h.name_id
     AND t.site_id IS NOT DISTINCT FROM h.site_id
     AND t.op_name IS NOT DISTINCT FROM h.op_name
    JOIN _entries e USING (id)
    WHERE hits IS NOT NULL
      AND h.kind IN ('fused', 'step')
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
    -- an anti join, not NOT EXISTS: DuckDB plans a correlated subquery as a
    -- delim join, several operators more to plan and set up
    ANTI JOIN (SELECT text_id, ordinal FROM _hits WHERE kind = 'fused') f
      ON f.text_id = h.text_id AND f.ordinal = h.ordinal
    WHERE h.kind = 'step'
),
_text_pairs AS MATERIALIZED (
    -- which text can follow which in an entry's chain: the second fills the
    -- next step (ordered entries) or another step (unordered; the recursion
    -- keeps a path's steps distinct)
    SELECT a.ekey, a.text_id AS from_text, a.step AS from_step, b.text_id AS to_text, b.step AS to_step,
           a.nsteps, a.ordered, a.max_between, a.max_gap_ns
    FROM _text_roles a
    JOIN _text_roles b
      ON b.ekey = a.ekey
     AND CASE WHEN a.ordered THEN b.step = a.step + 1 ELSE b.step <> a.step END
    WHERE a.nsteps > 1
),
_reach AS (
    -- how far after a kernel of this text a following step may sit
    SELECT from_text AS text_id, max(max_between) + 1 AS reach
    FROM _text_pairs
    GROUP BY from_text
),
_neighbours AS (
    -- each kernel of the stage whose text can start a link, with the
    -- kernels d = 1 .. reach places later on its stream in the same stage
    -- whose text can end one
    SELECT a.spos, a.text_id, a.ts_ns + a.dur_ns AS end_ns, a.d, b.text_id AS next_text, b.ts_ns AS next_ts
    FROM (SELECT k.spos, k.text_id, k.ts_ns, k.dur_ns, k.sc, unnest(range(1, r.reach + 1)) AS d
          FROM _k k
          JOIN _reach r USING (text_id)
          WHERE k.sc IN (SELECT sc FROM _in_stage)) a
    JOIN (SELECT spos, text_id, ts_ns, sc FROM _k
          WHERE text_id IN (SELECT to_text FROM _text_pairs)) b
      ON b.spos = a.spos + a.d
    WHERE b.sc = a.sc
),
_edges AS MATERIALIZED (
    -- links of an occurrence: the kernel d places later fills a following
    -- step, with at most max_between kernels between (d <= max_between + 1)
    -- and starting at most max_gap_ns after the first one ends
    SELECT p.ekey, n.spos AS from_spos, p.from_step, n.spos + n.d AS to_spos, p.to_step, p.nsteps, p.ordered
    FROM _neighbours n
    JOIN _text_pairs p ON p.from_text = n.text_id AND p.to_text = n.next_text
    WHERE n.d <= p.max_between + 1
      AND n.next_ts - n.end_ns <= p.max_gap_ns
),
_paths AS (
    -- partial occurrences: n kernels (as spos) in stream order filling n
    -- distinct steps, walked along _edges; as many iterations as the
    -- longest chain has steps. Starts: kernels with a link from the first
    -- step (any step when unordered), and every kernel of a one-step chain.
    SELECT ekey, nsteps, last_spos, last_step, 1 AS n, (1::BIGINT << last_step) AS used, [last_spos] AS kernels
    FROM (SELECT DISTINCT ekey, nsteps, from_spos AS last_spos, from_step AS last_step
          FROM _edges
          WHERE NOT ordered OR from_step = 1
          UNION ALL
          SELECT r.ekey, 1, k.spos, r.step
          FROM _k k
          JOIN _text_roles r USING (text_id)
          WHERE r.nsteps = 1 AND k.sc IN (SELECT sc FROM _in_stage))
    UNION ALL
    SELECT p.ekey, p.nsteps, e.to_spos, e.to_step, p.n + 1,
           p.used | (1::BIGINT << e.to_step), list_append(p.kernels, e.to_spos)
    FROM _paths p
    JOIN _edges e ON e.ekey = p.ekey AND e.from_spos = p.last_spos AND e.from_step = p.last_step
    WHERE p.n < p.nsteps
      AND (e.ordered OR (p.used & (1::BIGINT << e.to_step)) = 0)
),
_candidates AS MATERIALIZED (
    -- complete occurrences; an unordered chain can fill its steps from the
    -- same kernels in several ways, which is one candidate. cand is an
    -- arbitrary unique id: identity only, never order.
    SELECT row_number() OVER () AS cand, ekey, kernels,
           kernels[1] AS first_spos, kernels[-1] AS last_spos
    FROM (SELECT DISTINCT ekey, kernels FROM _paths WHERE n = nsteps)
),
_contested AS MATERIALIZED (
    -- candidates sharing a kernel with another candidate of their entry;
    -- the others are taken as they are
    SELECT DISTINCT c.cand
    FROM (SELECT cand, ekey, unnest(kernels) AS spos FROM _candidates) c
    SEMI JOIN (SELECT ekey, spos
               FROM (SELECT ekey, unnest(kernels) AS spos FROM _candidates)
               GROUP BY ekey, spos
               HAVING count(*) > 1) x USING (ekey, spos)
),
_islands AS MATERIALIZED (
    -- contested candidates in islands: an island starts where no earlier
    -- candidate's span reaches (spans never cross streams); island = ekey *
    -- 2^40 + its number. Candidates can only share a kernel in an island.
    SELECT cand, ekey, kernels, first_spos, last_spos,
           (ekey << 40)
           | sum(CASE WHEN prev_last IS NULL OR first_spos > prev_last THEN 1 ELSE 0 END)
                 OVER (PARTITION BY ekey ORDER BY first_spos, last_spos ROWS UNBOUNDED PRECEDING) AS island
    FROM (SELECT *,
                 max(last_spos) OVER (PARTITION BY ekey ORDER BY first_spos, last_spos
                                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_last
          FROM _candidates
          SEMI JOIN _contested USING (cand))
),
_chosen AS (
    -- the greedy pass, island by island: its candidates in order, tightest
    -- first (fewest positions spanned), then leftmost, then by the kernels'
    -- positions in turn (an island is on one stream, so comparing spos
    -- compares positions; two candidates of an entry never have the same
    -- kernels, so the order is total and aggregates/fusion_sweep.go keeps
    -- it); the first is taken, a later one when none of its kernels is in
    -- one taken before (one fold, sorted in a list: a recursive CTE and
    -- its window cost a few ms of setup where nothing is contested)
    SELECT unnest(list_reduce(
               list_transform(list_sort(list({'w': last_spos - first_spos, 'f': first_spos, 'k': kernels, 'c': cand})),
                              lambda x: {'c': [x.c], 'k': x.k}),
               lambda acc, x: CASE WHEN list_has_any(acc.k, x.k) THEN acc
                                   ELSE {'c': list_concat(acc.c, x.c), 'k': list_concat(acc.k, x.k)} END,
               {'c': []::BIGINT[], 'k': []::BIGINT[]}).c) AS cand
    FROM _islands
    GROUP BY island
),
_taken AS (
    SELECT cand FROM _candidates ANTI JOIN _contested USING (cand)
    UNION ALL
    SELECT cand FROM _chosen
),
_chain_kernels AS (
    -- step: the kernel's place in the occurrence, which is its chain step
    -- for ordered entries (stream order for unordered ones)
    SELECT e.id, c.ekey % 16 AS variant, c.kernels[1] AS occurrence_spos,
           unnest(c.kernels) AS spos, generate_subscripts(c.kernels, 1) AS step
    FROM _candidates c
    SEMI JOIN _taken t USING (cand)
    JOIN _entries e ON e.ordinal = c.ekey // 16
),
_chain AS MATERIALIZED (
    -- the accepted occurrences' kernels (materialized so the planner, which
    -- cannot estimate the recursive CTEs, does not join the gates first);
    -- with `chains`, the table of them aggregates/fusion_sweep.go wrote
    SELECT c.id, c.variant, c.step, o.kernel_id AS occurrence,
           k.kernel_id, k.trace_id, k.rank, k.sc, k.dev, k.text_id, k.dur_ns, k.run_id
    FROM _chain_kernels c
    JOIN _k k ON k.spos = c.spos
    JOIN _k o ON o.spos = c.occurrence_spos
    WHERE chains IS NULL
    UNION ALL
    SELECT c.id, c.variant, c.step, c.occurrence,
           k.kernel_id, k.trace_id, k.rank, k.sc, k.dev, k.text_id, k.dur_ns, k.run_id
    FROM query(CASE WHEN chains IS NULL
                    THEN 'SELECT NULL::VARCHAR AS id, NULL::INTEGER AS variant, NULL::BIGINT AS step,
                                 NULL::BIGINT AS occurrence, NULL::BIGINT AS kernel_id WHERE false'
                    ELSE 'SELECT id, variant, step, occurrence, kernel_id FROM ' || chains END) c
    JOIN _k k USING (kernel_id)
    WHERE chains IS NOT NULL
),
_fused AS MATERIALIZED (
    -- kernels of the stage running an entry's fused path
    SELECT k.kernel_id, k.trace_id, k.rank, k.sc, k.dev, k.text_id, k.dur_ns, e.id, k.run_id
    FROM _k k
    JOIN _hits h ON h.kind = 'fused' AND h.text_id = k.text_id
    JOIN _entries e USING (ordinal)
    WHERE k.sc IN (SELECT sc FROM _in_stage)
),
_fused_groups AS (
    -- (trace, stage, device) groups where the entry's fused path runs
    SELECT DISTINCT trace_id, sc, dev, id FROM _fused
),
_out AS (
    SELECT 'chain' AS kind, c.id, c.variant,
           CASE WHEN g.own THEN 'opportunity' ELSE 'elsewhere' END AS status,
           c.occurrence, c.step, c.kernel_id, c.trace_id, c.rank, c.sc, c.text_id, c.dur_ns, c.run_id
    FROM _chain c
    JOIN _gates g ON g.trace_id = c.trace_id AND g.id = c.id AND g.applies
    -- where the fused path runs, the entry is `already fused` (own
    -- framework) or says nothing (another framework already runs an
    -- equivalent kernel); split chains left in that group are another
    -- shape's path or keyword noise (a left join with the few groups:
    -- NOT EXISTS was a delim join that grouped every chain kernel first,
    -- and ANTI JOIN slower still, bench/README.md forty-second figures)
    LEFT JOIN _fused_groups fg
      ON fg.trace_id = c.trace_id AND fg.sc = c.sc AND fg.dev = c.dev AND fg.id = c.id
    WHERE fg.id IS NULL
    UNION ALL
    SELECT 'fused', f.id, 0, 'already fused', f.kernel_id, 0,
           f.kernel_id, f.trace_id, f.rank, f.sc, f.text_id, f.dur_ns, f.run_id
    FROM _fused f
    JOIN _gates g ON g.trace_id = f.trace_id AND g.id = f.id
    WHERE g.own AND g.applies
)
SELECT o.kind, o.id, o.variant, o.status, o.occurrence, o.step,
       o.kernel_id, o.trace_id, o.rank, st.stage, t.name_id, t.site_id, t.op_name, o.dur_ns, o.run_id
FROM _out o
JOIN _stages st USING (sc)
JOIN _texts t USING (text_id);

-- _fusion_fingerprint(run, ofp := NULL): changes whenever an input of the
-- run's saved fuse-pattern rows (fusion_match_store) changes: what changes
-- its overlap (its kernels, their names' categories; ofp as in
-- kernel_overlap_cached), the installed catalog, the run's model and TP
-- size, or its traces' frameworks and TP ranks (the entries' gates), and
-- with the matching rule itself: the tag below names its version (2: the
-- greedy choice's last tie-break compares the kernels' positions, where 1
-- hashed them), so a copy saved under another rule is not read as current.
CREATE MACRO _fusion_fingerprint_given(run, ofp := NULL) AS (
    SELECT hash('chain rule 2', ofp::UBIGINT,
                (SELECT list(DISTINCT catalog_hash ORDER BY catalog_hash) FROM fusion_catalog),
                (SELECT list(hash(model, tp_size)) FROM runs WHERE run_id = run),
                (SELECT list(hash(trace_id, framework, tp_rank) ORDER BY trace_id) FROM traces WHERE run_id = run))
);
CREATE MACRO _fusion_fingerprint(run, ofp := NULL) AS
    _fusion_fingerprint_given(run, ofp := _overlap_fp(run, ofp));

-- _fusion_current(run, rnk, ofp := NULL): whether rank rnk of run `run`
-- has saved fuse-pattern rows (fusion_match_store, aggregates.SaveFusion)
-- that are current: their record (fusion_store_runs) holds the fingerprint
-- the run has now (_fusion_fingerprint; ofp as in _overlap_current). The
-- one definition its readers ask (queries/fusion_fresh.sql); false without
-- a record (always in a lake, which keeps none). _fusion_current_given
-- and _fusion_fingerprint_given are the same with ofp given (not NULL),
-- which a query that computed it names (queries/fusion.go; see
-- _steps_current_given).
CREATE MACRO _fusion_current_given(run, rnk, ofp := NULL) AS
    coalesce(list_contains((SELECT list(f.fingerprint) FROM fusion_store_runs f
                            WHERE f.run_id = run AND f.rank = rnk),
                           _fusion_fingerprint_given(run, ofp := ofp)), false);
CREATE MACRO _fusion_current(run, rnk, ofp := NULL) AS
    _fusion_current_given(run, rnk, ofp := _overlap_fp(run, ofp));

-- _fusion_matches_for(run, mapping, rnk, stg, share_floor, runs): the rows
-- of triage's fuse-pattern table (matched as this module says),
-- as queries/fusion_matches.sql reads them for a report (runs NULL: run
-- `run`, mapping run `mapping` or NULL, rank `rnk` and stage `stg` or NULL
-- for all) and aggregates.SaveFusion saves them (runs: a list of run ids,
-- every rank of each computed at once as that rank's single-trace report).
-- Rows under share_floor (percent of the stage's kernel time) are left
-- out. chains as in _fusion_related (the finish's Go walk of a large
-- rank's streams). Columns and order: those fusion_matches.sql describes.
--
-- Conflicts, among opportunity/elsewhere rows of one
-- stage that passed their entry's min_share: in order of priority (high
-- first), chain steps (more first), related time (more first), catalog
-- position, a row is kept unless a kept row's entry subsumes its entry or a
-- kept row already claimed one of its kernels. Kept rows then hide rows of
-- entries they subsume that came earlier in that order (a user catalog may
-- rank a subsumer lower). Already-fused rows take no part: they say a fused
-- kernel runs, which no chain contradicts.
CREATE MACRO _fusion_matches_for(run, mapping, rnk, stg, share_floor, runs, chains := NULL, hits := NULL) AS TABLE
WITH
_related AS MATERIALIZED (
    SELECT *, CASE WHEN runs IS NULL THEN 0 ELSE (run_id::BIGINT << 32) | rank END AS grp
    FROM _fusion_related(run, mapping, rnk, stg, false, runs := runs, chains := chains, hits := hits)
),
_stage_ns AS (
    SELECT CASE WHEN runs IS NULL THEN 0 ELSE (run_id::BIGINT << 32) | rank END AS grp,
           stage, sum(dur_ns) AS stage_ns
    FROM kernels
    WHERE CASE WHEN runs IS NULL
               THEN run_id = run AND (rnk IS NULL OR rank = rnk) AND (stg IS NULL OR stage = stg)
               ELSE _run_in(run_id, runs) END
    GROUP BY ALL
),
_parts AS MATERIALIZED (
    -- the related kernels summed per row and (name, site), in one pass:
    -- the rows' counts, evidence and locations read these (a semi join of
    -- every related kernel with the rows shown built its hash table on the
    -- kernels). An occurrence has exactly one first kernel (step 1); a
    -- fused kernel (step 0) is its own occurrence
    SELECT grp, stage, id, status, name_id, site_id,
           count(*) FILTER (WHERE step <= 1) AS firsts, min(step) AS step, sum(dur_ns) AS ns
    FROM _related
    GROUP BY grp, stage, id, status, name_id, site_id
),
_rows AS (
    SELECT grp, stage, id, status, sum(firsts)::BIGINT AS occurrences, sum(ns) AS related_ns
    FROM _parts
    GROUP BY grp, stage, id, status
),
_gated AS (
    SELECT w.*, 100.0 * w.related_ns / s.stage_ns AS share_pct,
           f.ordinal, f.priority, f.steps, f.min_share, f.likely_share
    FROM _rows w
    JOIN _stage_ns s USING (grp, stage)
    JOIN fusion_catalog f USING (id)
    WHERE 100.0 * w.related_ns / s.stage_ns >= f.min_share
),
_order AS (
    -- chain rows in conflict order; marker identifies (entry, status)
    SELECT g.*,
           -(2 * g.ordinal + CASE WHEN g.status = 'elsewhere' THEN 1 ELSE 0 END + 1) AS marker,
           row_number() OVER (PARTITION BY g.grp, g.stage
                              ORDER BY g.priority DESC, g.steps DESC, g.related_ns DESC,
                                       g.ordinal, g.status) AS turn
    FROM _gated g
    WHERE g.status <> 'already fused'
),
_shared AS (
    -- pairs of chain rows of a stage sharing a kernel, the earlier in
    -- conflict order first (a kernel is in at most one occurrence of an
    -- entry, so a kernel listed twice in a stage is shared by two rows)
    SELECT DISTINCT a.grp, a.stage, a.id, a.status, b.marker AS earlier
    FROM (SELECT r.grp, r.stage, r.kernel_id, r.id, r.status, o.marker, o.turn
          FROM _related r
          JOIN _order o USING (grp, stage, id, status)
          SEMI JOIN (SELECT grp, stage, kernel_id FROM _related WHERE kind = 'chain'
                     GROUP BY grp, stage, kernel_id HAVING count(*) > 1) x USING (grp, stage, kernel_id)) a
    JOIN (SELECT r.grp, r.stage, r.kernel_id, o.marker, o.turn
          FROM _related r
          JOIN _order o USING (grp, stage, id, status)) b
      ON b.grp = a.grp AND b.stage = a.stage AND b.kernel_id = a.kernel_id AND b.turn < a.turn
),
_subsumers AS (
    -- markers of every (entry, status) that subsumes a row's entry
    SELECT o.grp, o.stage, o.id, o.status,
           list(-(2 * s.ordinal + b.bit + 1)) AS markers
    FROM _order o
    JOIN fusion_catalog s ON list_contains(s.subsumes, o.id)
    CROSS JOIN (VALUES (0), (1)) b(bit)
    GROUP BY o.grp, o.stage, o.id, o.status
),
_blockers AS (
    -- a row is dropped when one of these is kept before it: the rows that
    -- subsume it, and the earlier rows sharing a kernel with it
    SELECT o.grp, o.stage, o.id, o.status, o.marker, o.turn,
           list_distinct(list_concat(coalesce(s.markers, []), coalesce(x.earlier, []))) AS blockers,
           coalesce(s.markers, []) AS subsumers
    FROM _order o
    LEFT JOIN _subsumers s USING (grp, stage, id, status)
    LEFT JOIN (SELECT grp, stage, id, status, list(earlier) AS earlier
               FROM _shared
               GROUP BY ALL) x USING (grp, stage, id, status)
),
_folded AS (
    -- element: [marker, blockers...]; a row is kept when none of its
    -- blockers is in the accumulator, which then gains its marker
    -- (list_reduce starts from the first element, hence the neutral [0])
    SELECT grp, stage,
           list_reduce(list_prepend([0::BIGINT], list(list_prepend(marker, blockers) ORDER BY turn)),
                       lambda acc, x: CASE WHEN list_has_any(acc, x[2:]) THEN acc
                                           ELSE list_append(acc, x[1]) END) AS kept
    FROM _blockers
    GROUP BY grp, stage
),
_kept AS (
    SELECT o.*
    FROM _order o
    JOIN _folded f USING (grp, stage)
    JOIN _blockers b USING (grp, stage, id, status)
    WHERE list_contains(f.kept, o.marker)
      -- a kept subsumer later in the order still hides this row
      AND NOT list_has_any(f.kept, b.subsumers)
),
_shown AS (
    SELECT grp, stage, id, status, occurrences, related_ns, share_pct, ordinal, priority, steps, likely_share
    FROM _kept
    UNION ALL
    SELECT grp, stage, id, status, occurrences, related_ns, share_pct, ordinal, priority, steps, likely_share
    FROM _gated
    WHERE status = 'already fused'
),
_evidence AS (
    SELECT grp, stage, id, status,
           list(short_name ORDER BY step, ns DESC, short_name) AS evidence,
           list(ns ORDER BY step, ns DESC, short_name) AS evidence_ns
    FROM (SELECT r.grp, r.stage, r.id, r.status, n.short_name, min(r.step) AS step, sum(r.ns) AS ns
          FROM _parts r
          SEMI JOIN _shown w USING (grp, stage, id, status)
          JOIN kernel_names n USING (name_id)
          GROUP BY ALL)
    GROUP BY ALL
),
_locations AS (
    SELECT grp, stage, id, status,
           list(display ORDER BY step, ns DESC, display) AS locations
    FROM (SELECT r.grp, r.stage, r.id, r.status, s.display, min(r.step) AS step, sum(r.ns) AS ns
          FROM _parts r
          SEMI JOIN _shown w USING (grp, stage, id, status)
          JOIN sites s USING (site_id)
          GROUP BY ALL)
    GROUP BY ALL
)
SELECT w.stage, f.name AS pattern, w.id, w.status,
       CASE WHEN w.share_pct >= w.likely_share OR w.occurrences >= 4 THEN 'confirmed'
            ELSE 'candidate' END AS confidence,
       w.related_ns::BIGINT AS related_ns,
       w.share_pct,
       w.occurrences,
       e.evidence,
       -- each evidence kernel's share of the stage (related_ns is share_pct
       -- of the stage's kernel time, so ns / related_ns scales it)
       list_transform(e.evidence_ns, x -> CASE WHEN w.related_ns > 0
                                               THEN x * w.share_pct / w.related_ns ELSE 0 END) AS evidence_share_pct,
       coalesce(l.locations, []::VARCHAR[]) AS locations,
       f.framework || ': ' || f.sources[1] AS candidate_path,
       f.sources, f.rationale, f.switch, f.origin, f.framework, f.priority, f.steps,
       CASE WHEN runs IS NULL THEN run ELSE w.grp >> 32 END AS run_id,
       CASE WHEN runs IS NULL THEN rnk ELSE w.grp & 4294967295 END AS rank
FROM _shown w
JOIN fusion_catalog f USING (id)
JOIN _evidence e USING (grp, stage, id, status)
LEFT JOIN _locations l USING (grp, stage, id, status)
WHERE w.share_pct >= share_floor
ORDER BY w.grp,
         CASE w.stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                      WHEN 'unknown' THEN 3 ELSE 4 END,
         w.stage,
         w.status = 'already fused',
         w.priority DESC, w.related_ns DESC, w.ordinal, w.status;
