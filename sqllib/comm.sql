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


-- _comm_parts_for(run, skip := false, runs := NULL): the definition, per
-- (trace, rank, stage, device) of run `run` (or of every run listed in
-- runs; nothing when skip). Columns:
--   run_id, trace_id, rank, stage, device
--   comm_ns, comp_ns, overlap_ns   as above, on that device
-- migrations/0022_comm_overlap.sql holds its saved copy
-- (comm_overlap_store), guarded by the step aggregates' record
-- (step_store_runs), as the idle rows are. Its rows are written by the Go
-- sweep that saves the per-kernel overlap (aggregates/overlap_stream.go:
-- groupSweep, the same figures in one pass; 0024 records it), else by this
-- macro with the step aggregates; aggregates' TestSweepOverlapMatchesSQL
-- holds the two to the same rows.
CREATE MACRO _comm_parts_for(run, skip := false, runs := NULL) AS TABLE
WITH _k AS (
    SELECT k.run_id, k.trace_id, k.rank, k.stage, k.device, k.ts_ns, k.ts_ns + k.dur_ns AS end_ns,
           (n.category = 'communication')::INTEGER AS comm,
           (n.category NOT IN ('communication', 'memory'))::INTEGER AS comp
    FROM kernels k
    JOIN kernel_names n USING (name_id)
    WHERE CASE WHEN runs IS NULL THEN k.run_id = run ELSE _run_in(k.run_id, runs) END
      AND k.dur_ns > 0 AND NOT skip
),
_edges AS (
    -- every start and end, the changes at one instant summed
    SELECT run_id, trace_id, rank, stage, device, t, sum(dcomm) AS dcomm, sum(dcomp) AS dcomp
    FROM (SELECT run_id, trace_id, rank, stage, device, ts_ns AS t, comm AS dcomm, comp AS dcomp FROM _k
          UNION ALL
          SELECT run_id, trace_id, rank, stage, device, end_ns, -comm, -comp FROM _k)
    GROUP BY run_id, trace_id, rank, stage, device, t
),
_sweep AS (
    -- how many of each run from t to the next instant
    SELECT run_id, trace_id, rank, stage, device,
           sum(dcomm) OVER w AS ncomm, sum(dcomp) OVER w AS ncomp,
           lead(t) OVER w - t AS len
    FROM _edges
    WINDOW w AS (PARTITION BY trace_id, rank, stage, device ORDER BY t)
)
SELECT run_id, trace_id, rank, stage, device,
       coalesce(sum(len) FILTER (WHERE ncomm > 0), 0)::BIGINT AS comm_ns,
       coalesce(sum(len) FILTER (WHERE ncomp > 0), 0)::BIGINT AS comp_ns,
       coalesce(sum(len) FILTER (WHERE ncomm > 0 AND ncomp > 0), 0)::BIGINT AS overlap_ns
FROM _sweep
GROUP BY run_id, trace_id, rank, stage, device;

-- _comm_parts_cached(run, fresh := NULL): _comm_parts_for(run), read from
-- comm_overlap_store when the copy is current (fresh, or checked when
-- NULL: _steps_current, the step aggregates' copy). A given fresh reaches
-- skip as a constant (see _idle_steps_cached).
CREATE MACRO _comm_parts_cached(run, fresh := NULL) AS TABLE
WITH _f AS (
    SELECT _steps_current(run) AS saved WHERE fresh IS NULL
)
SELECT * FROM comm_overlap_store WHERE run_id = run AND CASE WHEN fresh IS NOT NULL THEN fresh ELSE (SELECT saved FROM _f) END
UNION ALL
SELECT * FROM _comm_parts_for(run, skip := CASE WHEN fresh IS NOT NULL THEN fresh ELSE (SELECT saved FROM _f) END);

-- _comm_overlap_pct(comm_ns, overlap_ns): comm_overlap's overlap_pct of
-- a stage and rank whose communication and overlap time are summed.
CREATE MACRO _comm_overlap_pct(comm_ns, overlap_ns) AS
    CASE WHEN comm_ns > 0 THEN 100.0 * overlap_ns / comm_ns END;

-- _comm_overlap_for(run, only_rank := NULL, fresh := NULL): comm_overlap
-- of run_id run, the copy's freshness given (fresh) or checked (NULL).
-- (only_rank: a parameter named like a column of the macros it calls
-- makes DuckDB's binder reject them.)
CREATE MACRO _comm_overlap_for(run, only_rank := NULL, fresh := NULL) AS TABLE
SELECT stage, rank,
       sum(comm_ns)::BIGINT AS comm_ns,
       sum(comp_ns)::BIGINT AS comp_ns,
       sum(overlap_ns)::BIGINT AS overlap_ns,
       _comm_overlap_pct(sum(comm_ns), sum(overlap_ns)) AS overlap_pct
FROM _comm_parts_cached(run, fresh := fresh)
WHERE only_rank IS NULL OR rank = only_rank
GROUP BY stage, rank;

-- _comm_overlap_saved(run, only_rank := NULL, fresh := NULL):
-- _comm_overlap_for over the saved copy (comm_overlap_store) alone, which
-- a query that knows the copy current names in its place (queries/launch.go):
-- DuckDB binds a macro's whole body, and binding _comm_parts_cached's
-- computing branch was 1.8 ms of a triage's 2.6 ms query.
CREATE MACRO _comm_overlap_saved(run, only_rank := NULL, fresh := NULL) AS TABLE
SELECT stage, rank,
       sum(comm_ns)::BIGINT AS comm_ns,
       sum(comp_ns)::BIGINT AS comp_ns,
       sum(overlap_ns)::BIGINT AS overlap_ns,
       _comm_overlap_pct(sum(comm_ns), sum(overlap_ns)) AS overlap_pct
FROM comm_overlap_store
WHERE run_id = run AND (only_rank IS NULL OR rank = only_rank)
GROUP BY stage, rank;

-- comm_overlap(run, rank := NULL): per stage and rank of one run (id or
-- label), rank NULL = every rank, read from the saved copy when current.
-- Columns:
--   stage, rank, comm_ns, comp_ns, overlap_ns (summed over the rank's
--   traces and devices)
--   overlap_pct   100 * overlap_ns / comm_ns (NULL without communication)
CREATE MACRO comm_overlap(run, rank := NULL) AS TABLE
SELECT * FROM _comm_overlap_for(_run_id(run), only_rank := rank);

COMMENT ON MACRO TABLE comm_overlap IS 'Communication hidden under computation per stage and rank of one run (id or label), rank NULL = every rank: the union of communication time, of computation time, their overlap and its % of communication time (HTA''s comm-comp overlap).';
COMMENT ON MACRO TABLE _comm_parts_for IS 'Internal (run_id only, always recomputes): use comm_overlap.';
