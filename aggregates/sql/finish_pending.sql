-- finish_pending: what a finish has to save, in one query, and the one
-- definition of a copy being due: every run with a copy due, whether each
-- of its copies is due (the per-kernel overlap, aggregates.SaveOverlap;
-- the fuse-pattern rows, SaveFusion; the step aggregates, SaveSteps; the
-- overlap-opportunity rows, SaveOverlapRows), and its ranks with GPU
-- events and their number (as run_ranks.sql), a row per rank (rank and
-- kernels NULL for a run without GPU events).
--
-- A copy is due when it is missing or older than one of the run's traces.
-- A run whose traces were all given the mapping role by the caller
-- (two-trace triage, `ingest --role mapping`) is left out: it is there to
-- lend Python sites, its copies are not what anyone asked to see. (A run
-- detected as mapping from its server args may well be triaged alone.) A
-- copy whose save failed $max_attempts times (finish_failures) is not due
-- until one of the run's traces is newer than the failures: retrying it
-- for ever would cost every later ingest that save, and fail it.
--
-- Due is not the opposite of current (_overlap_current, what readers ask):
-- a copy made stale by a reclassification or another catalog (the
-- fuse-pattern and overlap-row fingerprints cover them) is not due, so a
-- finish never fingerprints every run of the warehouse, nor saves every
-- run's rows again each time a report switches catalogs; readers compute
-- what is stale, and the run's next ingest saves it again.
--
-- Columns: run_id, overlap, fusion, steps, overlap_rows, rank, kernels.
-- Parameters: $max_attempts.
WITH t AS (
    SELECT run_id, bool_or(role <> 'mapping' OR role_source <> 'flag') AS own, max(ingested_at) AS traces_at
    FROM traces
    GROUP BY run_id
),
due AS (
    -- a copy is due unless its record is as new as the run's traces, or
    -- its save failed $max_attempts times for these traces
    SELECT t.run_id,
           coalesce((o.stored_at IS NULL OR t.traces_at > o.stored_at)
                    AND (coalesce(fo.attempts, 0) < $max_attempts OR t.traces_at > fo.traces_at), false) AS overlap,
           coalesce((fu.stored_at IS NULL OR t.traces_at > fu.stored_at)
                    AND (coalesce(ff.attempts, 0) < $max_attempts OR t.traces_at > ff.traces_at), false) AS fusion,
           coalesce((st.stored_at IS NULL OR t.traces_at > st.stored_at)
                    AND (coalesce(fs.attempts, 0) < $max_attempts OR t.traces_at > fs.traces_at), false) AS steps,
           coalesce((ro.stored_at IS NULL OR t.traces_at > ro.stored_at)
                    AND (coalesce(fr.attempts, 0) < $max_attempts OR t.traces_at > fr.traces_at), false) AS overlap_rows
    FROM t
    LEFT JOIN kernel_overlap_runs o ON o.run_id = t.run_id
    LEFT JOIN (SELECT run_id, min(stored_at) AS stored_at FROM fusion_store_runs GROUP BY run_id) fu ON fu.run_id = t.run_id
    LEFT JOIN step_store_runs st ON st.run_id = t.run_id
    LEFT JOIN (SELECT run_id, min(stored_at) AS stored_at FROM overlap_row_runs GROUP BY run_id) ro ON ro.run_id = t.run_id
    LEFT JOIN finish_failures fo ON fo.run_id = t.run_id AND fo.store = 'overlap'
    LEFT JOIN finish_failures ff ON ff.run_id = t.run_id AND ff.store = 'fuse patterns'
    LEFT JOIN finish_failures fs ON fs.run_id = t.run_id AND fs.store = 'steps'
    LEFT JOIN finish_failures fr ON fr.run_id = t.run_id AND fr.store = 'overlap rows'
    WHERE coalesce(t.own, false)
),
due_runs AS (
    SELECT * FROM due WHERE overlap OR fusion OR steps OR overlap_rows
)
SELECT s.run_id, s.overlap, s.fusion, s.steps, s.overlap_rows, k.rank, k.kernels
FROM due_runs s
LEFT JOIN (SELECT run_id, rank, count(*) AS kernels
           FROM kernels
           WHERE run_id IN (SELECT run_id FROM due_runs)
           GROUP BY run_id, rank) k ON k.run_id = s.run_id
ORDER BY s.run_id, k.rank
