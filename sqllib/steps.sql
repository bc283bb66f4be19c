-- steps: per-step aggregates, the unit `compare` and `history` measure
-- (README "Comparing runs"), and their saved copies.
--
-- A step is one forward iteration of the server: ingest finds a trace's
-- step windows (steps, ingest/sql/insert_steps.sql; migration 0008 says
-- which evidence comes first) and assigns each GPU event to one
-- (kernels.step, ingest/link.go or ingest/sql/link_steps.sql). The
-- aggregates below read a run's per-kernel overlap (kernel_overlap_cached,
-- overlap module). aggregates.SaveSteps saves them after ingest
-- (step_kernel_store, step_total_store, step_store_runs), and the *_cached
-- macros read the copy while it is current (_steps_current), as with the
-- overlap. Given `runs :=` (a list of run ids), the *_for macros cover
-- every run listed, from their saved overlap, which the caller checks is
-- current (_overlap_current, asked by aggregates/sql/overlap_store_current.sql).

-- _step_kernels_of(src, run, skip, runs) and _step_totals_of(src, run,
-- skip, runs): the rows of step_kernels_for and step_totals_for (below)
-- computed from the per-kernel overlap in `src`, the name of a CTE of the
-- caller (read with query_table) holding kernel_overlap_cached's columns,
-- joined to run `run`'s kernels (or those of the runs listed in `runs`).
-- Only step_*_for and their saved twins _step_*_saved name them: DuckDB
-- binds every macro a body calls, also where a constant then skips it,
-- and the computation of the overlap (kernel_overlap_cached) was about
-- half of a step save's planning where the saved copy answers.
CREATE MACRO _step_kernels_of(src, run, skip, runs) AS TABLE
SELECT o.run_id, o.trace_id, o.rank, o.stage, k.step, o.name_id,
       count(*) AS launches,
       sum(o.dur_ns)::BIGINT AS dur_ns,
       sum(o.hidden_ns)::BIGINT AS hidden_ns,
       sum(o.hidden_by_compute_ns)::BIGINT AS hidden_by_compute_ns
FROM query_table(src) o
JOIN kernels k USING (kernel_id)
WHERE CASE WHEN runs IS NULL THEN k.run_id = run ELSE _run_in(k.run_id, runs) END
      AND k.step IS NOT NULL AND NOT skip
GROUP BY o.run_id, o.trace_id, o.rank, o.stage, k.step, o.name_id;

CREATE MACRO _step_totals_of(src, run, skip, runs) AS TABLE
WITH _k AS (
    SELECT o.run_id, o.trace_id, o.rank, o.stage, k.step, o.device, o.kernel_id,
           o.ts_ns, o.ts_ns + o.dur_ns AS end_ns, o.dur_ns,
           CASE WHEN n.category = 'communication'
                THEN o.dur_ns - o.hidden_by_compute_ns ELSE 0 END AS exposed_ns
    FROM query_table(src) o
    JOIN kernels k USING (kernel_id)
    JOIN kernel_names n ON n.name_id = o.name_id
    WHERE CASE WHEN runs IS NULL THEN k.run_id = run ELSE _run_in(k.run_id, runs) END
      AND k.step IS NOT NULL AND NOT skip
),
_u AS (
    SELECT *,
           max(end_ns) OVER (PARTITION BY trace_id, rank, stage, step, device
                             ORDER BY ts_ns, kernel_id
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prior_end_ns
    FROM _k
)
SELECT run_id, trace_id, rank, stage, step,
       count(*) AS kernels,
       sum(dur_ns)::BIGINT AS kernel_ns,
       -- each event adds the part of it after every earlier event's end
       sum(greatest(0, end_ns - greatest(ts_ns, coalesce(prior_end_ns, ts_ns))))::BIGINT AS busy_ns,
       min(ts_ns) AS first_ns,
       max(end_ns) AS last_end_ns,
       (max(end_ns) - min(ts_ns))::BIGINT AS window_ns,
       sum(exposed_ns)::BIGINT AS exposed_comm_ns
FROM _u
GROUP BY run_id, trace_id, rank, stage, step;

-- step_kernels_for(run, skip := false, runs := NULL): one row per (trace,
-- rank, stage, step, name) of run `run`'s GPU events that belong to a step
-- (or of the runs listed in `runs`; nothing when skip). Columns:
--   run_id, trace_id, rank, stage, step, name_id
--   launches              GPU events
--   dur_ns                summed dur_ns
--   hidden_ns             summed kernel_overlap hidden_ns (under another stream)
--   hidden_by_compute_ns  summed hidden_by_compute_ns
CREATE MACRO step_kernels_for(run, skip := false, runs := NULL) AS TABLE
WITH _step_overlap AS NOT MATERIALIZED (
    SELECT * FROM kernel_overlap_cached(run) WHERE runs IS NULL
    UNION ALL
    SELECT * FROM kernel_overlap_store WHERE _run_in(run_id, runs)
)
SELECT * FROM _step_kernels_of('_step_overlap', run, skip, runs);

-- step_totals_for(run, skip := false, runs := NULL): one row per (trace,
-- rank, stage, step) of run `run` (or of the runs listed in `runs`;
-- nothing when skip). Columns:
--   run_id, trace_id, rank, stage, step
--   kernels          GPU events
--   kernel_ns        summed dur_ns (overlapping events counted each)
--   busy_ns          GPU busy time: the union of the step's event intervals
--                    per device, summed over devices
--   first_ns         first start; last_end_ns: last end
--   window_ns        last_end_ns - first_ns: the step time (its GPU window)
--   exposed_comm_ns  communication time not hidden under compute: summed
--                    dur_ns - hidden_by_compute_ns of the step's
--                    communication-category events
-- So window_ns = busy_ns + idle and kernel_ns - busy_ns is the overlap.
CREATE MACRO step_totals_for(run, skip := false, runs := NULL) AS TABLE
WITH _step_overlap AS NOT MATERIALIZED (
    SELECT * FROM kernel_overlap_cached(run) WHERE runs IS NULL
    UNION ALL
    SELECT * FROM kernel_overlap_store WHERE _run_in(run_id, runs)
)
SELECT * FROM _step_totals_of('_step_overlap', run, skip, runs);

-- _step_kernels_saved(run, skip := false, runs := NULL) and
-- _step_totals_saved(...): step_kernels_for's and step_totals_for's rows,
-- their arguments, for a caller that knows the per-kernel overlap of the
-- run (or of every run of runs) is saved and current (_overlap_current):
-- read from kernel_overlap_store alone, the computation not bound. The
-- step save names them then (aggregates/sql/step_store_*_saved.sql).
CREATE MACRO _step_kernels_saved(run, skip := false, runs := NULL) AS TABLE
WITH _step_overlap AS NOT MATERIALIZED (
    SELECT * FROM kernel_overlap_store
    WHERE CASE WHEN runs IS NULL THEN run_id = run ELSE _run_in(run_id, runs) END
)
SELECT * FROM _step_kernels_of('_step_overlap', run, skip, runs);

CREATE MACRO _step_totals_saved(run, skip := false, runs := NULL) AS TABLE
WITH _step_overlap AS NOT MATERIALIZED (
    SELECT * FROM kernel_overlap_store
    WHERE CASE WHEN runs IS NULL THEN run_id = run ELSE _run_in(run_id, runs) END
)
SELECT * FROM _step_totals_of('_step_overlap', run, skip, runs);

-- _step_kernels_none(run, skip := false, runs := NULL) and
-- _step_totals_none(...): no row, with the columns of step_kernels_for and
-- step_totals_for (their saved copies' tables). A query reading a run's
-- saved copy, which it knows current, calls the *_for macro with skip :=
-- true, which has no row; it names these in its place (queries/compare.go,
-- history.go), as DuckDB binds a macro's whole body even where a constant
-- skips it: binding the two was most of compare's planning of a small run
-- (about 3 ms per statement).
CREATE MACRO _step_kernels_none(run, skip := false, runs := NULL) AS TABLE
SELECT * FROM step_kernel_store WHERE false;

CREATE MACRO _step_totals_none(run, skip := false, runs := NULL) AS TABLE
SELECT * FROM step_total_store WHERE false;

-- _steps_fingerprint(run, ofp := NULL): changes whenever the inputs of the
-- run's step aggregates change: what changes its overlap (_overlap_fp:
-- ofp when the caller computed it, so the kernels are read once more, not
-- twice), or any event's step. In a lake, the constant 0 (see
-- _overlap_fingerprint).
-- _steps_fingerprint_given(run, ofp) is the same with the overlap
-- fingerprint given (not NULL): what _steps_current_given builds on.
CREATE MACRO _steps_fingerprint_given(run, ofp := NULL) AS
    CASE WHEN getvariable('tracehouse_lake') IS NOT NULL THEN 0::UBIGINT ELSE (
    SELECT hash(ofp::UBIGINT, n, steps)
    FROM (SELECT count(*) AS n, bit_xor(hash(kernel_id, step)) AS steps
          FROM kernels
          WHERE run_id = run AND getvariable('tracehouse_lake') IS NULL)
    ) END;
CREATE MACRO _steps_fingerprint(run, ofp := NULL) AS
    _steps_fingerprint_given(run, ofp := _overlap_fp(run, ofp));

-- _steps_current(run, ofp := NULL): whether run's saved step aggregates
-- (step_kernel_store, step_total_store) and the idle rows saved with them
-- (idle_step_store, idle_gap_store: same transaction, same record) are
-- current: their record (step_store_runs) holds the fingerprint the run
-- has now (_steps_fingerprint; ofp as in _overlap_current). The one
-- definition every reader of those copies asks (the *_cached macros here
-- and in the idle module, queries/steps_fresh.sql, idle_fresh.sql,
-- lake.Write); false without a record. _steps_current_given(run, ofp) is
-- the same with ofp given (not NULL), which a query that computed it
-- names in its place (queries/idle.go): DuckDB binds the branch of
-- _overlap_fp computing it, which a constant skips.
CREATE MACRO _steps_current_given(run, ofp := NULL) AS
    coalesce(list_contains((SELECT list(fingerprint) FROM step_store_runs WHERE run_id = run),
                           _steps_fingerprint_given(run, ofp := ofp)), false);
CREATE MACRO _steps_current(run, ofp := NULL) AS
    _steps_current_given(run, ofp := _overlap_fp(run, ofp));

-- step_kernels_cached(run): step_kernels_for(run), read from
-- step_kernel_store when the run's saved copy is current. Same columns.
CREATE MACRO step_kernels_cached(run) AS TABLE
WITH _fresh AS (SELECT _steps_current(run) AS fresh)
SELECT s.* FROM step_kernel_store s
WHERE s.run_id = run AND (SELECT fresh FROM _fresh)
UNION ALL
SELECT * FROM step_kernels_for(run, skip := (SELECT fresh FROM _fresh));

-- step_totals_cached(run): step_totals_for(run), read from step_total_store
-- when the run's saved copy is current. Same columns.
CREATE MACRO step_totals_cached(run) AS TABLE
WITH _fresh AS (SELECT _steps_current(run) AS fresh)
SELECT s.* FROM step_total_store s
WHERE s.run_id = run AND (SELECT fresh FROM _fresh)
UNION ALL
SELECT * FROM step_totals_for(run, skip := (SELECT fresh FROM _fresh));

COMMENT ON MACRO TABLE step_kernels_for IS 'Internal (run_id only, always recomputes): per (trace, rank, stage, step, kernel name) launches, time and hidden time; use step_kernels_cached.';
COMMENT ON MACRO TABLE step_totals_for IS 'Internal (run_id only, always recomputes): per (trace, rank, stage, step) kernel time, busy time, window and exposed communication; use step_totals_cached.';
COMMENT ON MACRO TABLE step_kernels_cached IS 'Per (trace, rank, stage, step, kernel name) of one run (run id): launches, time, hidden time; read from the saved copy when current.';
COMMENT ON MACRO TABLE step_totals_cached IS 'Per (trace, rank, stage, step) of one run (run id): kernel time, GPU busy time, step window, exposed communication; read from the saved copy when current.';
