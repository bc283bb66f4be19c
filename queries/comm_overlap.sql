-- comm_overlap: communication hidden under computation per stage and rank
-- (sqllib/comm.sql, comm_overlap: Holistic Trace Analysis's comm-comp
-- overlap) over the selected rank(s), read from its saved copy
-- (comm_overlap_store) when current.
--
-- Columns: comm_overlap's (stage, rank, comm_ns, comp_ns, overlap_ns,
-- overlap_pct). Sorted by stage (prefill, decode, mixed, unknown, others
-- by name), rank.
--
-- Parameters: $run; $rank (NULL = every rank); $stage (NULL = every
-- stage); $fresh (true when the run's copies saved with its step
-- aggregates are current, idle_fresh.sql; NULL = checked here).
SELECT stage, rank, comm_ns, comp_ns, overlap_ns, overlap_pct
FROM _comm_overlap_for($run, only_rank := $rank, fresh := $fresh)
WHERE $stage IS NULL OR stage = $stage
ORDER BY CASE stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                    WHEN 'unknown' THEN 3 ELSE 4 END,
         stage, rank
