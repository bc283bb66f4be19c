-- straggler_ranks: per stage and rank, how often the rank arrives last at
-- a collective and what the others wait for it (sqllib/straggler.sql,
-- straggler_ranks), over every rank of the run.
--
-- Columns: straggler_ranks's (stage, rank, collectives, last, last_pct,
-- caused_wait_ns, wait_ns, straggler). Sorted by stage (prefill, decode,
-- mixed, unknown, others by name), rank.
--
-- Parameters: $run; $stage (NULL = every stage).
SELECT stage, rank, collectives, last, last_pct, caused_wait_ns, wait_ns, straggler
FROM straggler_ranks($run)
WHERE $stage IS NULL OR stage = $stage
ORDER BY CASE stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                    WHEN 'unknown' THEN 3 ELSE 4 END,
         stage, rank
