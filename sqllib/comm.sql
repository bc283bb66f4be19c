-- comm: communication hidden under computation (issue 37 item 4), Holistic
-- Trace Analysis's comm-comp overlap: per stage and rank, the time when a
-- communication event and a computation event both run on the rank's
-- device, as a share of the time communication runs.
--
-- Per (trace, rank, stage, device), over the stage's GPU events of nonzero
-- duration (steps play no part, as in HTA, which takes the whole trace):
--   comm_ns     the union of the communication events' intervals
--               (category 'communication')
--   comp_ns     the union of the computation events' intervals (every
--               other category but 'memory': memcpy and memset are
--               neither, as in HTA)
--   overlap_ns  the time inside both unions
-- HTA calls an event communication when its name holds "nccl"; ours is the
-- classifier's category, which also counts custom all-reduce kernels.


-- comm_overlap(run, rank := NULL): per stage and rank of one run (id or
-- label), rank NULL = every rank. Columns:
--   stage, rank, comm_ns, comp_ns, overlap_ns (summed over the rank's
--   traces and devices)
--   overlap_pct   100 * overlap_ns / comm_ns (NULL without communication)
CREATE MACRO comm_overlap(run, rank := NULL) AS TABLE
WITH _k AS (
    -- (rk: an unqualified `rank` would be the macro's parameter)
    SELECT k.trace_id, k.rank AS rk, k.stage, k.device, k.ts_ns, k.ts_ns + k.dur_ns AS end_ns,
           (n.category = 'communication')::INTEGER AS comm,
           (n.category NOT IN ('communication', 'memory'))::INTEGER AS comp
    FROM kernels k
    JOIN kernel_names n USING (name_id)
    WHERE k.run_id = _run_id(run) AND (rank IS NULL OR k.rank = rank) AND k.dur_ns > 0
),
_edges AS (
    -- every start and end, the changes at one instant summed
    SELECT trace_id, rk, stage, device, t, sum(dcomm) AS dcomm, sum(dcomp) AS dcomp
    FROM (SELECT trace_id, rk, stage, device, ts_ns AS t, comm AS dcomm, comp AS dcomp FROM _k
          UNION ALL
          SELECT trace_id, rk, stage, device, end_ns, -comm, -comp FROM _k)
    GROUP BY trace_id, rk, stage, device, t
),
_sweep AS (
    -- how many of each run from t to the next instant
    SELECT rk, stage,
           sum(dcomm) OVER w AS ncomm, sum(dcomp) OVER w AS ncomp,
           lead(t) OVER w - t AS len
    FROM _edges
    WINDOW w AS (PARTITION BY trace_id, rk, stage, device ORDER BY t)
)
SELECT stage, rk AS rank,
       coalesce(sum(len) FILTER (WHERE ncomm > 0), 0)::BIGINT AS comm_ns,
       coalesce(sum(len) FILTER (WHERE ncomp > 0), 0)::BIGINT AS comp_ns,
       coalesce(sum(len) FILTER (WHERE ncomm > 0 AND ncomp > 0), 0)::BIGINT AS overlap_ns,
       CASE WHEN sum(len) FILTER (WHERE ncomm > 0) > 0
            THEN 100.0 * coalesce(sum(len) FILTER (WHERE ncomm > 0 AND ncomp > 0), 0) / sum(len) FILTER (WHERE ncomm > 0)
       END AS overlap_pct
FROM _sweep
GROUP BY stage, rk;

COMMENT ON MACRO TABLE comm_overlap IS 'Communication hidden under computation per stage and rank of one run (id or label), rank NULL = every rank: the union of communication time, of computation time, their overlap and its % of communication time (HTA''s comm-comp overlap).';
