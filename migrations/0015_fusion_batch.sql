-- 0015_fusion_batch: the fuse-pattern rows of many runs and ranks in one
-- statement (issue 10 and 11: target.Finish planned queries/fusion_matches.sql
-- once per run and rank, about 40 ms of planning and 35 ms of operator
-- set-up each on a small rank, which was most of an ingest of many small
-- runs). The helpers of 0005 and 0009 take a list of run ids, `runs :=`,
-- in place of `run` and `rnk` (every rank of those runs), and carry each
-- kernel's run_id; queries/fusion_matches.sql keys every step by (run,
-- rank) when given `$runs`. Called without `runs`, every helper reads and
-- returns what it did, with run_id as a new last column.
--
-- Two changes make a batch give each rank exactly the rows a report of that
-- rank alone gives:
--   * _fusion_related's last tie-break hashed the kernels' spos, whose high
--     half numbers streams in whatever order the batch holds them; it now
--     hashes their positions on their stream (the low half). Candidates
--     that reach that tie-break share an island, hence a stream, so the
--     tie-break still separates them.
--   * the models and min_tp gates (_gates.applies) were applied once, to
--     the keyword hits of the one run's texts; texts are shared by the runs
--     of a batch, so each occurrence and fused kernel now also checks its
--     own trace's gate (the same for every trace of a run).

-- _fusion_kernels(run, mapping, rnk, runs := NULL): as in 0005, or every
-- kernel of the runs listed in `runs` (single-trace only); plus run_id.
CREATE OR REPLACE MACRO _fusion_kernels(run, mapping, rnk, runs := NULL) AS TABLE
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
           ELSE list_contains(runs, k.run_id) END
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

-- _fusion_gates(run, runs := NULL): as in 0009, for the runs listed in `runs`
-- when given.
CREATE OR REPLACE MACRO _fusion_gates(run, runs := NULL) AS TABLE
WITH _run AS (
    SELECT r.run_id, lower(r.model) AS model,
           coalesce(r.tp_size, (SELECT max(t.tp_rank) + 1 FROM traces t WHERE t.run_id = r.run_id)) AS tp
    FROM runs r
    WHERE CASE WHEN runs IS NULL THEN r.run_id = run ELSE list_contains(runs, r.run_id) END
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

-- _fusion_related(run, mapping, rnk, stg, variants, runs := NULL): as in
-- 0005, for every kernel of the runs listed in `runs` when given; plus
-- run_id.
CREATE OR REPLACE MACRO _fusion_related(run, mapping, rnk, stg, variants, runs := NULL) AS TABLE
WITH RECURSIVE
_entries AS (
    SELECT id, ordinal, steps, ordered, max_between, max_gap_ns FROM fusion_catalog
),
_gates AS MATERIALIZED (
    SELECT * FROM _fusion_gates(run, runs := runs)
),
_kall AS MATERIALIZED (
    SELECT * FROM _fusion_kernels(run, mapping, rnk, runs := runs)
),
_texts AS MATERIALIZED (
    -- the run's distinct kernel texts (name, site, op), numbered, with the
    -- compact forms keywords are matched on
    SELECT c.name_id, c.site_id, c.op_name, row_number() OVER () AS text_id,
           _fusion_compact(n.short_name) AS name_c,
           _fusion_site_form(s.file, s.rel_path, s.line, s.func, s.display) AS site_c,
           _fusion_compact(c.op_name) AS op_c
    FROM (SELECT DISTINCT name_id, site_id, op_name FROM _kall) c
    JOIN kernel_names n USING (name_id)
    LEFT JOIN sites s ON s.site_id = c.site_id
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
    SELECT sc FROM _stages WHERE stg IS NULL OR stg = '' OR stage = stg
),
_hits AS MATERIALIZED (
    -- fused and step keyword hits per text, for entries whose models and
    -- min_tp gates pass (the same for every trace of a run; the framework
    -- only changes the status)
    SELECT DISTINCT t.text_id, kw.kind, e.ordinal, kw.step_no
    FROM _texts t
    JOIN catalog_keywords kw
      ON kw.kind IN ('fused', 'step')
     AND _fusion_kw_hit(t.name_c, t.site_c, t.op_c, kw.keyword_compact)
    JOIN _entries e USING (id)
    WHERE kw.id IN (SELECT id FROM _gates WHERE applies)
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
_ranked AS MATERIALIZED (
    -- rn = the greedy order, islands one after the other (a global sort is
    -- much cheaper than a window per island): tightest first (fewest
    -- positions spanned), then leftmost, then by the second and third
    -- kernel (a fixed hash of the kernels' stream positions for the rare
    -- tie left among chains of five or more steps)
    SELECT i.*,
           row_number() OVER (ORDER BY i.island, i.last_spos - i.first_spos, i.first_spos,
                                       i.kernels[2], i.kernels[3],
                                       hash(list_transform(i.kernels, lambda x: x & 4294967295))) AS rn
    FROM _islands i
),
_greedy AS (
    -- the greedy pass, one candidate of every island per iteration (as
    -- many iterations as the largest island has candidates, usually two):
    -- the first is taken; a later one is taken when none of its kernels is
    -- in the island's claimed list, which then gains them
    SELECT r.island, r.rn, r.cand, true AS taken, r.kernels AS claimed
    FROM _ranked r
    SEMI JOIN (SELECT island, min(rn) AS rn FROM _ranked GROUP BY island) h USING (island, rn)
    UNION ALL
    SELECT r.island, r.rn, r.cand,
           NOT list_has_any(g.claimed, r.kernels),
           CASE WHEN list_has_any(g.claimed, r.kernels) THEN g.claimed
                ELSE list_concat(g.claimed, r.kernels) END
    FROM _greedy g
    JOIN _ranked r ON r.rn = g.rn + 1 AND r.island = g.island
),
_taken AS (
    SELECT cand FROM _candidates ANTI JOIN _contested USING (cand)
    UNION ALL
    SELECT cand FROM _greedy WHERE taken
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
    -- cannot estimate the recursive CTEs, does not join the gates first)
    SELECT c.id, c.variant, c.step, o.kernel_id AS occurrence,
           k.kernel_id, k.trace_id, k.rank, k.sc, k.dev, k.text_id, k.dur_ns, k.run_id
    FROM _chain_kernels c
    JOIN _k k ON k.spos = c.spos
    JOIN _k o ON o.spos = c.occurrence_spos
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
    -- shape's path or keyword noise
    WHERE NOT EXISTS (SELECT 1 FROM _fused_groups fg
                      WHERE fg.trace_id = c.trace_id AND fg.sc = c.sc
                        AND fg.dev = c.dev AND fg.id = c.id)
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
