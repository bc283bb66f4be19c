-- triage_gpu_events: the "GPU events:" line of the triage header, which must
-- say which stages and ranks have none.
--
-- One row per (stage, rank) pair of run $run, where the stages are every
-- per-kernel stage, and the file-level stage of each trace that stored no
-- GPU event (a file named DECODE with no kernels must show; a `mixed` file
-- whose kernels all took per-kernel stages names no stage of its own), and
-- the ranks every rank of its traces: the number of GPU events stored with that
-- stage and rank, 0 for a pair with none. Sorted by stage (prefill, decode,
-- mixed, unknown, others by name), then rank.
--
-- Parameters: $run.
-- Columns: stage, rank, events.
WITH counts AS (
    SELECT stage, rank, count(*) AS events
    FROM kernels
    WHERE run_id = $run
    GROUP BY stage, rank
),
stages AS (
    SELECT stage FROM counts
    UNION
    SELECT stage FROM traces
    WHERE run_id = $run AND kernel_events + memcpy_events + memset_events = 0
),
ranks AS (
    SELECT rank FROM counts
    UNION
    SELECT rank FROM traces WHERE run_id = $run
)
SELECT s.stage, r.rank, coalesce(c.events, 0)::BIGINT AS events
FROM stages s
CROSS JOIN ranks r
LEFT JOIN counts c ON c.stage = s.stage AND c.rank = r.rank
ORDER BY CASE s.stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                      WHEN 'unknown' THEN 3 ELSE 4 END,
         s.stage, r.rank
