-- overlap_rows: triage's overlap-opportunity table, one definition for
-- the report that computes it (queries/overlap_by_kernel.sql) and the copy
-- aggregates.SaveOverlapRows saves per rank (overlap_row_store), with its
-- fingerprint and when that copy is current. After the scope module: it
-- reads kernel_overlap_cached (overlap) and name_scope (scope).

-- _overlap_rows_for(run, mapping, rnk, stg, share_floor, dur_floor, ofp,
-- runs): one row per (stage, kernel short_name) of run `run` (runs NULL:
-- mapping run `mapping` or NULL, rank `rnk` and stage `stg` or NULL for
-- all, ofp the run's overlap fingerprint or NULL), or of every rank of the
-- runs listed in `runs` (whose per-kernel overlap is saved and current),
-- each (run, rank) as the single-trace report of that rank alone. Rows
-- under share_floor (percent of the stage's GPU busy time) are left out;
-- dur_floor is the verdicts' "total >= 5 us" floor in ns. Columns and
-- order: those queries/overlap_by_kernel.sql describes.
--
-- Choices where triage's rules leave room (a performance engineer's reading):
--   * ties are broken on content, never on an id: run, trace, kernel, name
--     and site ids follow the order files were ingested in (README "Ingest
--     guarantees"), so a tie broken by one gave other rows to the same
--     traces ingested the other way round.
--   * family/category of a short name: those of its raw name with the most
--     GPU time (raw names sharing a short name almost always agree), ties by
--     the raw name.
--   * verdicts: `headroom` (total >= floor and exclusive >= 45%), else
--     `low-roi-hidden` (elementwise/memory, total >= floor, hidden >= 65%),
--     else `hidden` (total >= floor, mostly overlapped already), else
--     `negligible` (total under the floor).
--   * priority, first rule that applies:
--       P5 skip overlap   share < 1% of busy time, or total under the floor
--                         (whatever $min_share shows)
--       P3 observe later  headroom, compute (overlapping compute with compute
--                         is not a quick win, whatever the dependencies)
--       P3 manual check   headroom, scope unmapped (no code location to act
--                         on, and the dependency check is blind without it)
--       P2 check deps     headroom, dependency high or unclear
--       P1 try overlap    headroom, dependency low, communication
--       P1 try fusion     headroom, dependency low, elementwise/memory/other
--       P4 skip overlap   low-roi-hidden, and `hidden` rows (already hidden)
--   * `share < 1%` and `$min_share` use this table's own share (of busy time).
--   * scope: single-trace, the short name's own dominant site (most GPU time,
--     ties by the site's text, sites.name), else, for graph replays, `graph replay @ <frame>` of
--     their graph launches (still "unmapped" for the rules below: it is not
--     the kernel's code); two-trace, the site name_scope transferred.
--   * dependency signal, from the longest instance (ties: earlier start,
--     then the trace's path, then its content hash, then the kernel's place
--     in its trace): previous/next event on the same stream of the same
--     (trace, stage, device) by start time (kernel_overlap's
--     prev/next_kernel_id, ties by kernel_id); gap = max(0, next start -
--     end), before: max(0, start - previous end); tight when
--     gap <= max(2 us, min(20 us, 0.15 x dur)); a tight
--     side is a risk on same site file, same site function, same cpu_op, or
--     a category dependency (communication next to non-communication;
--     elementwise/memory next to anything but other, unclassified counting
--     as other); a tight non-risky side with an unmapped scope on either end
--     is unclear. Scopes are the instances' own (single-trace) or their
--     names' transferred ones (two-trace).
-- It is defined after _overlap_rows_of, which computes these rows from
-- the per-kernel overlap it reads.

-- _overlap_rows_of(kernels, run, mapping, rnk, stg, share_floor,
-- dur_floor, runs): _overlap_rows_for's rows computed from the per-kernel
-- overlap in `kernels`, the name of a CTE of the caller (read with
-- query_table) holding kernel_overlap_for's columns kernel_id, trace_id,
-- stage, device, stream, name_id, ts_ns, dur_ns, hidden_ns,
-- hidden_by_compute_ns, exclusive_ns, start_rank, starts_before_end,
-- union_share_ns, prev_kernel_id, next_kernel_id, and grp: 0, or with
-- runs the row's (run_id << 32) | rank. Only _overlap_rows_for and
-- _overlap_rows_saved name it: DuckDB binds every macro a body calls,
-- also where a constant then skips it, and the computation of the
-- per-kernel overlap (kernel_overlap_cached) was about a third of this
-- table's planning where the saved copy answers.
CREATE MACRO _overlap_rows_of(kernels, run, mapping, rnk, stg, share_floor, dur_floor, runs) AS TABLE
WITH ko AS NOT MATERIALIZED (
    -- read where it is used, not held: held, the saved overlap of 800 k
    -- kernels (about 110 MB) and the joins below passed the finish's
    -- 200 MiB bound
    SELECT * FROM query_table(kernels)
),
per_name_trace AS (
    SELECT grp, stage, name_id, trace_id,
           count(*) AS launches,
           sum(dur_ns) AS total_ns,
           sum(hidden_ns) AS hidden_ns,
           sum(hidden_by_compute_ns) AS hidden_by_compute_ns,
           sum(exclusive_ns) AS exclusive_ns,
           sum(union_share_ns) AS share_ns,
           -- the longest and what the dependency signal reads of it, ties
           -- by the earlier start, then the smaller id, which within one
           -- trace is the kernel's place in it (an ordered first() would
           -- buffer every kernel of the group). Per trace: across traces
           -- the id follows the order they were ingested in, so the tie
           -- goes on below by the traces' paths.
           arg_max({kernel_id: kernel_id, trace_id: trace_id, device: device, stream: stream,
                    ts_ns: ts_ns, dur_ns: dur_ns,
                    prev_kernel_id: prev_kernel_id, next_kernel_id: next_kernel_id},
                   {d: dur_ns, t: -ts_ns, k: -kernel_id}) AS longest
    FROM ko
    GROUP BY grp, stage, name_id, trace_id
),
per_name_id AS (
    SELECT k.grp, k.stage, k.name_id, any_value(n.name) AS name, any_value(n.short_name) AS short_name,
           any_value(n.family) AS family, any_value(n.category) AS category,
           sum(k.launches) AS launches, sum(k.total_ns) AS total_ns, sum(k.hidden_ns) AS hidden_ns,
           sum(k.hidden_by_compute_ns) AS hidden_by_compute_ns, sum(k.exclusive_ns) AS exclusive_ns,
           sum(k.share_ns) AS share_ns,
           first(struct_insert(k.longest, path := t.path, content_hash := t.content_hash)
                 ORDER BY k.longest.dur_ns DESC, k.longest.ts_ns, t.path, t.content_hash) AS longest
    FROM per_name_trace k
    JOIN kernel_names n USING (name_id)
    JOIN traces t USING (trace_id)
    GROUP BY k.grp, k.stage, k.name_id
),
busy AS (
    -- GPU busy time of the stage (kernel_overlap.union_share_ns sums to the
    -- union of each device's intervals, the same figure as stage_busy.sql;
    -- every kernel of ko has a name: kernel_overlap_for's and the sweep's
    -- join kernel_names)
    SELECT grp, stage, sum(share_ns) AS busy_ns
    FROM per_name_id
    GROUP BY grp, stage
),
agg AS (
    -- per (stage, short name): one family/category, those of its raw name
    -- with the most GPU time, the sums, and its longest kernel
    SELECT grp, stage, short_name,
           first(family ORDER BY total_ns DESC, name) AS family,
           first(category ORDER BY total_ns DESC, name) AS category,
           sum(launches)::BIGINT AS launches,
           sum(total_ns)::BIGINT AS total_ns,
           sum(hidden_ns)::BIGINT AS hidden_ns,
           sum(hidden_by_compute_ns)::BIGINT AS hidden_by_compute_ns,
           sum(exclusive_ns)::BIGINT AS exclusive_ns,
           first(longest ORDER BY longest.dur_ns DESC, longest.ts_ns, longest.path,
                 longest.content_hash, longest.kernel_id) AS longest
    FROM per_name_id
    GROUP BY grp, stage, short_name
),
pairs AS (
    -- every overlapping pair once: b starts while a runs (start ranks from
    -- kernel_overlap), kept when on another stream with a positive overlap.
    -- Both kernels of such a pair are partly hidden, so kernels with
    -- hidden_ns = 0 (most of them in a typical trace) are left out first.
    SELECT a.grp, a.stage, a.name_id AS a_name_id, b.name_id AS b_name_id,
           sum(least(a.ts_ns + a.dur_ns, b.ts_ns + b.dur_ns) - b.ts_ns) AS overlap_ns
    FROM (
        SELECT grp, stage, name_id, ts_ns, dur_ns, stream,
               unnest(range(start_rank + 1, starts_before_end + 1)) AS b_rank
        FROM ko
        WHERE starts_before_end > start_rank AND hidden_ns > 0
    ) a
    JOIN (SELECT * FROM ko WHERE hidden_ns > 0) b ON b.start_rank = a.b_rank AND b.grp = a.grp
    WHERE b.stream IS DISTINCT FROM a.stream
      AND least(a.ts_ns + a.dur_ns, b.ts_ns + b.dur_ns) > b.ts_ns
    GROUP BY a.grp, a.stage, a.name_id, b.name_id
),
pair_totals AS (
    -- both directions, by short name
    SELECT p.grp, p.stage, na.short_name AS kernel, nb.short_name AS other, sum(p.overlap_ns) AS overlap_ns
    FROM (
        SELECT grp, stage, a_name_id AS k_id, b_name_id AS o_id, overlap_ns FROM pairs
        UNION ALL
        SELECT grp, stage, b_name_id, a_name_id, overlap_ns FROM pairs
    ) p
    JOIN kernel_names na ON na.name_id = p.k_id
    JOIN kernel_names nb ON nb.name_id = p.o_id
    GROUP BY p.grp, p.stage, na.short_name, nb.short_name
),
dominant AS (
    SELECT p.grp, p.stage, p.kernel,
           first(p.other ORDER BY p.overlap_ns DESC,
                 CASE n.category WHEN 'compute' THEN 0 WHEN 'communication' THEN 1
                                 WHEN 'memory' THEN 2 WHEN 'elementwise' THEN 3
                                 WHEN 'other' THEN 4 ELSE 5 END,
                 p.other) AS dominant
    FROM pair_totals p
    JOIN agg n ON n.grp = p.grp AND n.stage = p.stage AND n.short_name = p.other
    GROUP BY p.grp, p.stage, p.kernel
),
scope_names AS (
    -- two-trace mode: the transferred scope of each (stage, short name)
    -- (never with runs, so grp is 0)
    -- (the short name's raw names, in the order of their text)
    SELECT s.stage, s.short_name,
           first(s.match ORDER BY n.name) AS match,
           first(s.site_id ORDER BY n.name) AS site_id,
           first(s.op_name ORDER BY n.name) AS op_name
    FROM name_scope(run, mapping) s
    JOIN kernel_names n USING (name_id)
    WHERE mapping IS NOT NULL
    GROUP BY s.stage, s.short_name
),
own_site AS (
    -- single-trace mode: each short name's dominant own site; a name with
    -- none but replayed by CUDA/HIP graphs gets the dominant frame around
    -- its graph launches (kernel_scope's 'graph-replay'), shown as such but
    -- not a code location: priority and dependency rules see no site
    SELECT grp, stage, short_name,
           first(site_id ORDER BY ns DESC, site) FILTER (WHERE NOT replay) AS site_id,
           first(site_id ORDER BY ns DESC, site) FILTER (WHERE replay) AS replay_site_id
    FROM (
        SELECT k.grp, k.stage, n.short_name, k.site_id, any_value(s.name) AS site, k.replay, sum(k.ns) AS ns
        FROM (
            SELECT grp, stage, name_id, site_id, replay, sum(dur_ns) AS ns
            FROM (
                -- a kernel's own site; the graph replays, a few, are
                -- joined to their launches apart (a join of every
                -- kernel held all of them in its hash table)
                SELECT CASE WHEN runs IS NULL THEN 0 ELSE (k.run_id::BIGINT << 32) | k.rank END AS grp,
                       k.stage, k.name_id, k.site_id, false AS replay, k.dur_ns
                FROM kernels k
                WHERE mapping IS NULL AND k.site_id IS NOT NULL
                  AND CASE WHEN runs IS NULL
                           THEN k.run_id = run AND (rnk IS NULL OR k.rank = rnk) AND (stg IS NULL OR k.stage = stg)
                           ELSE _run_in(k.run_id, runs) END
                UNION ALL
                SELECT CASE WHEN runs IS NULL THEN 0 ELSE (k.run_id::BIGINT << 32) | k.rank END,
                       k.stage, k.name_id, l.site_id, true, k.dur_ns
                FROM (SELECT * FROM kernels k
                      WHERE mapping IS NULL AND k.site_id IS NULL AND k.graph_launch
                        AND CASE WHEN runs IS NULL
                                 THEN k.run_id = run AND (rnk IS NULL OR k.rank = rnk) AND (stg IS NULL OR k.stage = stg)
                                 ELSE _run_in(k.run_id, runs) END) k
                -- (equalities only, so DuckDB hashes it.) The launches are
                -- those of the runs' traces: DuckDB hashed the launches side,
                -- every launch stored (1.5 M rows, 0.11 CPU-s of each ingest
                -- into 1,000 runs), even when no kernel was replayed; the
                -- traces' filter skips other traces' row groups.
                JOIN (SELECT launch_id, trace_id, site_id
                      FROM launches
                      WHERE site_id IS NOT NULL
                        AND trace_id IN (SELECT trace_id FROM traces t
                                         WHERE CASE WHEN runs IS NULL THEN t.run_id = run
                                                    ELSE _run_in(t.run_id, runs) END)) l
                  ON l.launch_id = k.launch_id AND l.trace_id = k.trace_id
            )
            GROUP BY ALL
        ) k
        JOIN kernel_names n USING (name_id)
        JOIN sites s USING (site_id)
        GROUP BY k.grp, k.stage, n.short_name, k.site_id, k.replay
    )
    GROUP BY grp, stage, short_name
),
longest AS (
    SELECT grp, stage, short_name, longest.kernel_id, longest.trace_id, longest.device,
           longest.stream, longest.ts_ns, longest.dur_ns, longest.prev_kernel_id,
           longest.next_kernel_id
    FROM agg
),
neighbour_times AS (
    -- the few neighbours' times (a filter, not a join against every kernel)
    SELECT kernel_id, ts_ns, dur_ns
    FROM ko
    WHERE kernel_id IN (SELECT prev_kernel_id FROM longest
                        UNION ALL SELECT next_kernel_id FROM longest)
),
neighbours AS (
    SELECT l.grp, l.stage, l.short_name, l.kernel_id, l.ts_ns, l.dur_ns,
           p.kernel_id AS prev_id, p.ts_ns + p.dur_ns AS prev_end_ns,
           x.kernel_id AS next_id, x.ts_ns AS next_ts_ns
    FROM longest l
    LEFT JOIN neighbour_times p ON p.kernel_id = l.prev_kernel_id
    LEFT JOIN neighbour_times x ON x.kernel_id = l.next_kernel_id
),
event_scope AS (
    -- scope of the instances and their neighbours: site, cpu op, category
    SELECT k.kernel_id, n.category, s.site_id, s.file, s.func,
           CASE WHEN mapping IS NULL THEN o.name ELSE sn.op_name END AS op_name
    FROM (
        -- the few kernels first: filtered after the joins, the cpu_ops
        -- join ran over half a million kernels of a 1 M-kernel run
        SELECT * FROM kernels
        WHERE kernel_id IN (SELECT kernel_id FROM neighbours
                            UNION ALL SELECT prev_id FROM neighbours
                            UNION ALL SELECT next_id FROM neighbours)
    ) k
    JOIN kernel_names n USING (name_id)
    LEFT JOIN scope_names sn ON sn.stage = k.stage AND sn.short_name = n.short_name
    LEFT JOIN sites s
           ON s.site_id = CASE WHEN mapping IS NULL THEN k.site_id ELSE sn.site_id END
    -- (one equality, so DuckDB hashes it; see kernel_sites.sql)
    LEFT JOIN cpu_ops o ON o.op_id = CASE WHEN mapping IS NULL THEN k.op_id END
),
sides AS (
    SELECT grp, stage, short_name, kernel_id, dur_ns, prev_id AS other_id,
           greatest(0, ts_ns - prev_end_ns) AS gap_ns
    FROM neighbours
    WHERE prev_id IS NOT NULL
    UNION ALL
    SELECT grp, stage, short_name, kernel_id, dur_ns, next_id,
           greatest(0, next_ts_ns - (ts_ns + dur_ns))
    FROM neighbours
    WHERE next_id IS NOT NULL
),
side_risk AS (
    SELECT s.grp, s.stage, s.short_name,
           bool_or(s.tight AND (
               (c.file IS NOT NULL AND c.file = o.file)
               OR (c.func IS NOT NULL AND c.func = o.func)
               OR (c.op_name IS NOT NULL AND c.op_name = o.op_name)
               OR (n.category = 'communication' AND o.category IS DISTINCT FROM 'communication')
               OR (n.category IN ('elementwise', 'memory') AND coalesce(o.category, 'other') <> 'other')
           )) AS risky,
           bool_or(s.tight AND (c.site_id IS NULL OR o.site_id IS NULL)) AS tight_unmapped
    FROM (
        SELECT *, gap_ns <= greatest(2000, least(20000, 0.15 * dur_ns)) AS tight FROM sides
    ) s
    JOIN agg n ON n.grp = s.grp AND n.stage = s.stage AND n.short_name = s.short_name
    JOIN event_scope c ON c.kernel_id = s.kernel_id
    JOIN event_scope o ON o.kernel_id = s.other_id
    GROUP BY s.grp, s.stage, s.short_name
),
table_rows AS (
    SELECT a.grp, a.stage, a.short_name AS kernel, a.family, a.category,
           CASE WHEN mapping IS NOT NULL THEN coalesce(sn.match, 'unmapped')
                WHEN os.site_id IS NULL AND os.replay_site_id IS NOT NULL THEN 'graph-replay'
                ELSE 'self' END AS scope_match,
           CASE WHEN mapping IS NULL THEN os.site_id ELSE sn.site_id END AS scope_site_id,
           CASE WHEN mapping IS NULL AND os.site_id IS NULL THEN os.replay_site_id END AS replay_site_id,
           a.launches, a.total_ns, a.hidden_ns, a.hidden_by_compute_ns, a.exclusive_ns,
           b.busy_ns,
           CASE WHEN b.busy_ns > 0 THEN 100.0 * a.total_ns / b.busy_ns ELSE 0 END AS busy_share_pct,
           CASE WHEN a.total_ns > 0 THEN 100.0 * a.exclusive_ns / a.total_ns ELSE 0 END AS exclusive_pct,
           CASE WHEN a.total_ns > 0 THEN 100.0 * a.hidden_ns / a.total_ns ELSE 0 END AS hidden_pct,
           d.dominant,
           CASE WHEN coalesce(r.risky, false) THEN 'high'
                WHEN coalesce(r.tight_unmapped, false) THEN 'unclear'
                ELSE 'low' END AS dep_risk,
           a.longest.kernel_id AS longest_kernel_id, a.longest.trace_id AS longest_trace_id,
           a.longest.ts_ns AS longest_ts_ns, a.longest.dur_ns AS longest_dur_ns,
           a.longest.device AS longest_device, a.longest.stream AS longest_stream
    FROM agg a
    JOIN busy b USING (grp, stage)
    LEFT JOIN dominant d ON d.grp = a.grp AND d.stage = a.stage AND d.kernel = a.short_name
    LEFT JOIN scope_names sn ON sn.stage = a.stage AND sn.short_name = a.short_name
    LEFT JOIN own_site os ON os.grp = a.grp AND os.stage = a.stage AND os.short_name = a.short_name
    LEFT JOIN side_risk r ON r.grp = a.grp AND r.stage = a.stage AND r.short_name = a.short_name
),
verdicts AS (
    SELECT *,
           CASE WHEN total_ns >= dur_floor AND exclusive_ns >= 0.45 * total_ns THEN 'headroom'
                WHEN total_ns >= dur_floor AND category IN ('elementwise', 'memory')
                     AND hidden_ns >= 0.65 * total_ns THEN 'low-roi-hidden'
                WHEN total_ns >= dur_floor THEN 'hidden'
                ELSE 'negligible' END AS verdict
    FROM table_rows
),
ranked AS (
    SELECT *,
           CASE WHEN busy_share_pct < 1 OR verdict = 'negligible' THEN 'P5'
                WHEN verdict = 'headroom' AND category = 'compute' THEN 'P3'
                WHEN verdict = 'headroom' AND scope_site_id IS NULL THEN 'P3'
                WHEN verdict = 'headroom' AND dep_risk <> 'low' THEN 'P2'
                WHEN verdict = 'headroom' THEN 'P1'
                ELSE 'P4' END AS priority,
           CASE WHEN busy_share_pct < 1 OR verdict = 'negligible' THEN 'skip overlap'
                WHEN verdict = 'headroom' AND category = 'compute' THEN 'observe later'
                WHEN verdict = 'headroom' AND scope_site_id IS NULL THEN 'manual check'
                WHEN verdict = 'headroom' AND dep_risk <> 'low' THEN 'check deps'
                WHEN verdict = 'headroom' AND category = 'communication' THEN 'try overlap'
                WHEN verdict = 'headroom' THEN 'try fusion'
                ELSE 'skip overlap' END AS recommendation
    FROM verdicts
)
SELECT r.stage, r.priority, r.verdict, r.kernel, coalesce(r.family, 'other') AS family,
       coalesce(r.category, 'other') AS category,
       coalesce(s.display,
                'graph replay @ ' || coalesce(coalesce(rs.rel_path, rs.file) || ':' || rs.line
                                              || coalesce(' ' || rs.func, ''), rs.name),
                'unmapped') AS scope, r.scope_match,
       r.launches, r.total_ns, r.hidden_ns, r.hidden_by_compute_ns, r.exclusive_ns, r.busy_ns,
       r.busy_share_pct, r.exclusive_pct, r.hidden_pct,
       r.dominant, r.dep_risk, r.recommendation,
       r.longest_kernel_id, r.longest_trace_id, r.longest_ts_ns, r.longest_dur_ns,
       r.longest_device, r.longest_stream,
       CASE WHEN runs IS NULL THEN run ELSE r.grp >> 32 END AS run_id,
       CASE WHEN runs IS NULL THEN rnk ELSE r.grp & 4294967295 END AS rank
FROM ranked r
LEFT JOIN sites s ON s.site_id = r.scope_site_id
LEFT JOIN sites rs ON rs.site_id = r.replay_site_id
WHERE r.busy_share_pct >= share_floor
ORDER BY r.grp,
         CASE r.stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                      WHEN 'unknown' THEN 3 ELSE 4 END,
         r.stage, r.priority, r.exclusive_ns DESC, r.kernel;

-- _overlap_rows_kernels_saved(run, rnk, stg, runs): the kernels of
-- _overlap_rows_of read from the saved per-kernel overlap
-- (kernel_overlap_store): run `run`'s (rank rnk and stage stg, NULL for
-- all) with grp 0 when runs is NULL, else every rank of the runs listed.
CREATE MACRO _overlap_rows_kernels_saved(run, rnk, stg, runs) AS TABLE
SELECT kernel_id, trace_id, stage, device, stream, name_id, ts_ns, dur_ns,
       hidden_ns, hidden_by_compute_ns, exclusive_ns, start_rank,
       starts_before_end, union_share_ns, prev_kernel_id, next_kernel_id,
       CASE WHEN runs IS NULL THEN 0 ELSE (run_id::BIGINT << 32) | rank END AS grp
FROM kernel_overlap_store
WHERE CASE WHEN runs IS NULL
           THEN run_id = run AND (rnk IS NULL OR rank = rnk) AND (stg IS NULL OR stage = stg)
           ELSE _run_in(run_id, runs) END;

CREATE MACRO _overlap_rows_for(run, mapping, rnk, stg, share_floor, dur_floor, ofp, runs) AS TABLE
WITH computed AS MATERIALIZED (
    -- kernels and their overlap, computed (runs NULL); names stay ids here
    -- (a million strings cost more to materialize than the few joins on
    -- aggregates)
    SELECT kernel_id, trace_id, stage, device, stream, name_id, ts_ns, dur_ns,
           hidden_ns, hidden_by_compute_ns, exclusive_ns, start_rank,
           starts_before_end, union_share_ns, prev_kernel_id, next_kernel_id, 0 AS grp
    FROM kernel_overlap_cached(run, rank := rnk, stage := stg, ofp := ofp)
    WHERE runs IS NULL
),
_overlap_rows_kernels AS NOT MATERIALIZED (
    SELECT * FROM computed
    UNION ALL
    -- with runs, the saved per-kernel overlap (its start ranks are unique
    -- within a run)
    SELECT * FROM _overlap_rows_kernels_saved(run, rnk, stg, runs)
    WHERE runs IS NOT NULL
)
SELECT * FROM _overlap_rows_of('_overlap_rows_kernels', run, mapping, rnk, stg, share_floor, dur_floor, runs);

-- _overlap_rows_saved(run, mapping, rnk, stg, share_floor, dur_floor, ofp,
-- runs): _overlap_rows_for's rows, its arguments, for a caller that knows
-- the per-kernel overlap it reads is saved and current (the run's, or
-- every run's of runs: _overlap_current): they are read from
-- kernel_overlap_store alone, and the computation is not bound (ofp is
-- not read). queries.OverlapByKernel and aggregates.SaveOverlapRows name
-- it in place of _overlap_rows_for then.
CREATE MACRO _overlap_rows_saved(run, mapping, rnk, stg, share_floor, dur_floor, ofp, runs) AS TABLE
WITH _overlap_rows_kernels AS NOT MATERIALIZED (
    SELECT * FROM _overlap_rows_kernels_saved(run, rnk, stg, runs)
)
SELECT * FROM _overlap_rows_of('_overlap_rows_kernels', run, mapping, rnk, stg, share_floor, dur_floor, runs);

-- _overlap_rows_fingerprint(run, ofp := NULL): changes whenever an input of
-- the run's saved overlap-opportunity rows (overlap_row_store) changes:
-- what changes its overlap (its kernels, their names' categories), the
-- classifier (a migration changing the rules bumps its version and
-- reclassifies: families and categories), or the run's traces (their
-- kernels' sites, CPU ops and graph launches come with them).
-- _overlap_rows_fingerprint_given(run, ofp) is the same with the overlap
-- fingerprint given (not NULL).
CREATE MACRO _overlap_rows_fingerprint_given(run, ofp := NULL) AS (
    SELECT hash(ofp::UBIGINT,
                (SELECT max(version) FROM classifier_versions),
                (SELECT list(hash(trace_id, ingested_at) ORDER BY trace_id) FROM traces WHERE run_id = run))
);
CREATE MACRO _overlap_rows_fingerprint(run, ofp := NULL) AS
    _overlap_rows_fingerprint_given(run, ofp := _overlap_fp(run, ofp));

-- _overlap_rows_current(run, rnk, dur_floor, ofp := NULL): whether rank
-- rnk of run `run` has saved overlap-opportunity rows (overlap_row_store,
-- aggregates.SaveOverlapRows) that are current and made for the verdict
-- floor dur_floor (ns): their record (overlap_row_runs) holds that floor
-- and the fingerprint the run has now (_overlap_rows_fingerprint; ofp as
-- in _overlap_current). The one definition its readers ask
-- (queries/overlap_rows_fresh.sql); false without a record (always in a
-- lake, which keeps none). _overlap_rows_current_given(...) is the same
-- with ofp given (not NULL), which a query that computed it names in its
-- place (queries/overlap.go; see _steps_current_given).
CREATE MACRO _overlap_rows_current_given(run, rnk, dur_floor, ofp := NULL) AS
    coalesce(list_contains((SELECT list(o.fingerprint) FROM overlap_row_runs o
                            WHERE o.run_id = run AND o.rank = rnk AND o.min_dur_ns = dur_floor),
                           _overlap_rows_fingerprint_given(run, ofp := ofp)), false);
CREATE MACRO _overlap_rows_current(run, rnk, dur_floor, ofp := NULL) AS
    _overlap_rows_current_given(run, rnk, dur_floor, ofp := _overlap_fp(run, ofp));
