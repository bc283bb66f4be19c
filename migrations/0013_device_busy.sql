-- 0013_device_busy: saved per-device busy rows, and the overlap fingerprint
-- computed once per report (issue 11: a 1 M-kernel triage in <= 0.5 s).
-- On such a run stage_busy.sql took about 0.1 s: device_busy_cached summed
-- the 1 M saved per-kernel rows of kernel_overlap_store, and checked their
-- fingerprint (_overlap_fingerprint, a hash of every kernel of the run),
-- which the saved overlap-row and fuse-pattern checks of the same report
-- computed again. Now ingest.SaveOverlap also saves what device_busy_cached
-- returns (a handful of rows per run) under the same fingerprint, and the
-- macros that check that fingerprint take it precomputed (`ofp`, NULL =
-- compute it), so a report computes it once (queries/overlap_fingerprint.sql)
-- and passes it to each check. The values every macro returns are the
-- same: a fingerprint saved before this migration still matches.
--
-- (Rewritten once after landing, when every macro and view moved into the
-- SQL library, sqllib/: its macros are in sqllib/overlap.sql; the backfill
-- below writes out _device_busy_saved(NULL), which migrations do not call.
-- A warehouse never runs an applied migration again, and schema.Open
-- creates the library in every warehouse.)

-- device_busy_store: device_busy_for(run) rows of the runs whose overlap
-- is saved, same columns; written, cleared and guarded with
-- kernel_overlap_store (ingest.SaveOverlap: kernel_overlap_runs says
-- whether both are current).
CREATE TABLE device_busy_store (
    run_id      INTEGER NOT NULL,
    trace_id    INTEGER NOT NULL,
    rank        INTEGER NOT NULL,
    stage       VARCHAR NOT NULL,
    device      INTEGER,
    kernels     BIGINT NOT NULL,
    kernel_ns   BIGINT NOT NULL,
    busy_ns     BIGINT NOT NULL,
    first_ns    BIGINT NOT NULL,
    last_end_ns BIGINT NOT NULL,
    streams     BIGINT NOT NULL
);

-- every run saved so far (a stale copy stays guarded by kernel_overlap_runs)
INSERT INTO device_busy_store
SELECT run_id, trace_id, rank, stage, device,
       count(*) AS kernels,
       sum(dur_ns)::BIGINT AS kernel_ns,
       sum(union_share_ns)::BIGINT AS busy_ns,
       min(ts_ns) AS first_ns,
       max(ts_ns + dur_ns) AS last_end_ns,
       count(DISTINCT coalesce(stream, -1)) AS streams
FROM kernel_overlap_store
GROUP BY run_id, trace_id, rank, stage, device;

COMMENT ON TABLE device_busy_store IS 'Saved GPU busy time per trace, stage and device of runs whose overlap is saved (read through overlap_device_busy).';
