-- fusion_matches: triage's fuse-pattern table, matched as sqllib/fusion.sql
-- says: which catalog fusions already run, which split chains could
-- be fused, and which another framework fuses.
--
-- One row per (stage, fusion entry, status) that survives the gates, the
-- conflict resolution and $min_share. Rows come sorted by (run, rank) with
-- $runs, then by stage (prefill, decode, mixed, unknown, others by name),
-- then opportunity and elsewhere rows before already-fused rows, then
-- priority (high first), related time (high first) and the entry's
-- position in the catalog.
--
-- Parameters:
--   $run        timing run (the formal run in two-trace mode)
--   $mapping    mapping run lending Python sites and CPU ops (kernel_scope),
--               NULL in single-trace mode; they only decide keyword hits on
--               sites/ops and the locations shown, never timing
--   $rank       one rank, NULL for all ranks
--   $stage      one stage, NULL for all stages
--   $min_share  percent of the stage's summed kernel time under which a row
--               is not shown (after conflict resolution: a hidden row still
--               claims its kernels)
--   $runs       NULL for the report above; else a list of run ids, and the
--               rows of every rank of those runs are computed at once, each
--               (run, rank) as the single-trace report of that rank alone
--               ($run and $rank are then ignored; aggregates.SaveFusion)
--
-- Columns:
--   stage, pattern (the entry's name), id, status
--     status     `opportunity` (split chain on a trace of the entry's own
--                framework), `elsewhere` (split chain, another framework
--                fuses it), `already fused` (a kernel matches a fused keyword
--                on a trace of the entry's framework)
--   confidence   `confirmed` when share_pct >= likely_share or occurrences
--                >= 4 (once per layer-like repetition), else `candidate`
--   related_ns   summed duration of the related kernels: the kernels of the
--                accepted chain occurrences, or the fused kernels
--   share_pct    related_ns / summed duration of every GPU event of the
--                stage (same run, rank(s)) x 100
--   occurrences  chain occurrences, or fused kernels
--   evidence     the related kernels' short names, in chain-step order
--                (stream order for unordered entries), then by time (high
--                first), then name
--   evidence_share_pct  each of them: its related time's share of the
--                stage's summed kernel time (same order)
--   locations    their Python sites (display form), same order; NULL sites
--                (unmapped) are left out
--   candidate_path  "<framework>: <first source>", where the fused path lives
--   sources, rationale, switch (NULL when unknown), origin, framework,
--   priority, steps
--   run_id, rank  the (run, rank) of the row with $runs; else $run and $rank
--
-- Conflicts, among opportunity/elsewhere rows of one
-- stage that passed their entry's min_share: in order of priority (high
-- first), chain steps (more first), related time (more first), catalog
-- position, a row is kept unless a kept row's entry subsumes its entry or a
-- kept row already claimed one of its kernels. Kept rows then hide rows of
-- entries they subsume that came earlier in that order (a user catalog may
-- rank a subsumer lower). Already-fused rows take no part: they say a fused
-- kernel runs, which no chain contradicts.
WITH
_related AS MATERIALIZED (
    SELECT *, CASE WHEN $runs IS NULL THEN 0 ELSE (run_id::BIGINT << 32) | rank END AS grp
    FROM _fusion_related($run, $mapping, $rank, $stage, false, runs := $runs)
),
_stage_ns AS (
    SELECT CASE WHEN $runs IS NULL THEN 0 ELSE (run_id::BIGINT << 32) | rank END AS grp,
           stage, sum(dur_ns) AS stage_ns
    FROM kernels
    WHERE CASE WHEN $runs IS NULL
               THEN run_id = $run AND ($rank IS NULL OR rank = $rank) AND ($stage IS NULL OR stage = $stage)
               ELSE list_contains($runs, run_id) END
    GROUP BY ALL
),
_rows AS (
    -- an occurrence has exactly one first kernel (step 1); a fused kernel
    -- (step 0) is its own occurrence
    SELECT r.grp, r.stage, r.id, r.status,
           count(*) FILTER (WHERE r.step <= 1) AS occurrences,
           sum(r.dur_ns) AS related_ns
    FROM _related r
    GROUP BY r.grp, r.stage, r.id, r.status
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
           list_distinct(list_concat(coalesce(s.markers, []),
                                     coalesce((SELECT list(x.earlier) FROM _shared x
                                               WHERE x.grp = o.grp AND x.stage = o.stage
                                                 AND x.id = o.id AND x.status = o.status), []))) AS blockers,
           coalesce(s.markers, []) AS subsumers
    FROM _order o
    LEFT JOIN _subsumers s USING (grp, stage, id, status)
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
    FROM (SELECT r.grp, r.stage, r.id, r.status, n.short_name, min(r.step) AS step, sum(r.dur_ns) AS ns
          FROM _related r
          SEMI JOIN _shown w USING (grp, stage, id, status)
          JOIN kernel_names n USING (name_id)
          GROUP BY ALL)
    GROUP BY ALL
),
_locations AS (
    SELECT grp, stage, id, status,
           list(display ORDER BY step, ns DESC, display) AS locations
    FROM (SELECT r.grp, r.stage, r.id, r.status, s.display, min(r.step) AS step, sum(r.dur_ns) AS ns
          FROM _related r
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
       CASE WHEN $runs IS NULL THEN $run ELSE w.grp >> 32 END AS run_id,
       CASE WHEN $runs IS NULL THEN $rank ELSE w.grp & 4294967295 END AS rank
FROM _shown w
JOIN fusion_catalog f USING (id)
JOIN _evidence e USING (grp, stage, id, status)
LEFT JOIN _locations l USING (grp, stage, id, status)
WHERE w.share_pct >= $min_share
ORDER BY w.grp,
         CASE w.stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                      WHEN 'unknown' THEN 3 ELSE 4 END,
         w.stage,
         w.status = 'already fused',
         w.priority DESC, w.related_ns DESC, w.ordinal, w.status
