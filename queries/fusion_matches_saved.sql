-- fusion_matches_saved: the rows fusion_matches.sql gives for a
-- single-trace report ($mapping NULL) of run $run's rank $rank, read from
-- the copy aggregates.SaveFusion saved (current only when fusion_fresh.sql
-- says so): the saved rows cover every stage with no share floor, so a
-- stage and a floor are filters here. Same columns, same order:
-- stage (prefill, decode, mixed, unknown, others by name), then
-- opportunity and elsewhere rows before already-fused rows, then priority
-- (high first), related time (high first), the entry's catalog position.
--
-- Parameters: $run, $rank, $stage (NULL = every stage), $min_share.
--
-- Columns: as fusion_matches.sql: stage, pattern, id, status, confidence,
-- related_ns, share_pct, occurrences, evidence, evidence_share_pct,
-- locations, candidate_path, sources, rationale, switch, origin,
-- framework, priority, steps, run_id, rank.
SELECT s.stage, s.pattern, s.id, s.status, s.confidence, s.related_ns, s.share_pct, s.occurrences,
       s.evidence, s.evidence_share_pct, s.locations, s.candidate_path, s.sources, s.rationale, s.switch, s.origin,
       s.framework, s.priority, s.steps, s.run_id, s.rank
FROM fusion_match_store s
LEFT JOIN fusion_catalog f USING (id)
WHERE s.run_id = $run AND s.rank = $rank
  AND ($stage IS NULL OR s.stage = $stage)
  AND s.share_pct >= $min_share
ORDER BY CASE s.stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                      WHEN 'unknown' THEN 3 ELSE 4 END,
         s.stage,
         s.status = 'already fused',
         s.priority DESC, s.related_ns DESC, f.ordinal, s.status
