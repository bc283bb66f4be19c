-- fusion_similarity: the single similarity note printed after the
-- fuse-pattern table, per stage.
--
-- A note is written for a stage only when no catalog chain occurs there
-- whole (no opportunity or elsewhere match reaching its entry's min_share);
-- it names the closest chain. "Close" means: every step but one of an entry
-- with three or more steps occurs adjacently, with the entry's own rules
-- (order, max_between, max_gap_us, gates, fused-path suppression), the
-- missing step left out. Two-step entries never give a note: one matching
-- kernel is keyword co-occurrence, not a chain (the earlier tool's false
-- positive). At most one row per stage, the best by level, then related
-- time, priority (high first) and catalog position.
--
-- Parameters: $run, $mapping, $rank, $stage as in fusion_matches.sql;
-- $stages: NULL, or a list of stages ($stage NULL) whose notes are
-- wanted, each the row that stage's own query gives (queries.FusionNotes
-- asks for all the stages it needs in one statement).
--
-- Columns:
--   stage
--   level        `high` (>= 4 occurrences, once per layer-like repetition,
--                and share >= the entry's min_share), `medium` (one of the
--                two), `low` (neither)
--   id, pattern, framework, origin
--   status       what a whole match would have been: opportunity | elsewhere
--   steps        the entry's chain length
--   missing_step the step (1-based) that did not occur
--   missing_keywords  its keywords
--   occurrences, related_ns, share_pct   of the partial chain, as in
--                fusion_matches (share of the stage's summed kernel time)
--   evidence     the partial chain's short names in step order
WITH
_related AS MATERIALIZED (
    SELECT * FROM _fusion_related($run, $mapping, $rank, $stage, true, stgs := $stages)
    WHERE kind = 'chain'
),
_stage_ns AS (
    SELECT stage, sum(dur_ns) AS stage_ns
    FROM kernels
    WHERE run_id = $run
      AND ($rank IS NULL OR rank = $rank)
      AND ($stage IS NULL OR stage = $stage)
    GROUP BY stage
),
_rows AS (
    SELECT r.stage, r.id, r.variant, r.status,
           count(DISTINCT r.occurrence) AS occurrences,
           sum(r.dur_ns)::BIGINT AS related_ns,
           100.0 * sum(r.dur_ns) / any_value(s.stage_ns) AS share_pct
    FROM _related r
    JOIN _stage_ns s USING (stage)
    GROUP BY r.stage, r.id, r.variant, r.status
),
_exact AS (
    SELECT w.stage, w.id, w.share_pct >= f.min_share AS shown
    FROM _rows w
    JOIN fusion_catalog f USING (id)
    WHERE w.variant = 0
),
_near AS (
    SELECT w.*, f.name AS pattern, f.framework, f.origin, f.steps, f.priority, f.ordinal,
           CASE WHEN w.occurrences >= 4 AND w.share_pct >= f.min_share THEN 'high'
                WHEN w.occurrences >= 4 OR w.share_pct >= f.min_share THEN 'medium'
                ELSE 'low' END AS level
    FROM _rows w
    JOIN fusion_catalog f USING (id)
    ANTI JOIN (SELECT DISTINCT stage FROM _exact WHERE shown) x USING (stage)
    ANTI JOIN _exact e ON e.stage = w.stage AND e.id = w.id
    WHERE w.variant > 0
),
_best AS (
    SELECT *
    FROM _near
    QUALIFY row_number() OVER (PARTITION BY stage
                               ORDER BY CASE level WHEN 'high' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END,
                                        related_ns DESC, priority DESC, ordinal, variant, status) = 1
),
_evidence AS (
    SELECT stage, id, variant, status, list(short_name ORDER BY step, ns DESC, short_name) AS evidence
    FROM (SELECT r.stage, r.id, r.variant, r.status, n.short_name, min(r.step) AS step, sum(r.dur_ns) AS ns
          FROM _related r
          JOIN _best b USING (stage, id, variant, status)
          JOIN kernel_names n USING (name_id)
          GROUP BY ALL)
    GROUP BY ALL
)
SELECT b.stage, b.level, b.id, b.pattern, b.framework, b.origin, b.status,
       b.steps, b.variant AS missing_step, st.keywords AS missing_keywords,
       b.occurrences, b.related_ns, b.share_pct, e.evidence
FROM _best b
JOIN fusion_catalog_steps st ON st.id = b.id AND st.step_no = b.variant
JOIN _evidence e
  ON e.stage = b.stage AND e.id = b.id AND e.variant = b.variant AND e.status = b.status
ORDER BY CASE b.stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                      WHEN 'unknown' THEN 3 ELSE 4 END,
         b.stage
