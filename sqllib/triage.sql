-- triage: the saved triage report of a run (migration 0026: triage_store,
-- triage_store_runs). target.Finish saves, for each run it finishes, what
-- `triage RUN` shows with the default sections (queries.TriageData, a row
-- per section holding that section's rows as JSON); a triage with those
-- sections reads it back while it is current instead of computing every
-- section again (assemble.Triage). The copy is current while the run's
-- fingerprint (_triage_fingerprint) and the binary's recipe (the report's
-- queries, the SQL library and the encoding of their rows,
-- queries.TriageRecipe) are those
-- it was saved with. Every figure in it is defined where the computed
-- report's is (ARCHITECTURE.md, "Where a figure is defined").


-- _triage_fingerprint(run): changes whenever an input of the run's triage
-- report changes. It covers what the fingerprints of the copies a triage
-- reads cover (_steps_fingerprint and so _overlap_fingerprint: every
-- kernel's times, stream, device, stage, rank, name and step, its name's
-- category; _fusion_fingerprint: the catalog, the run's model and TP size,
-- its traces' frameworks and TP ranks; _overlap_rows_fingerprint: the
-- classifier's version, when its traces were ingested), and besides: the
-- kernels' kind, graph launch, launch, CPU op and Python site, their names'
-- family, short and display names, the run's and its traces' rows as the
-- header shows them. It reads them in one pass over the run's kernels
-- rather than through those three macros: binding them cost 51 M
-- instructions, this 26 M (bench/README.md, "Fourteenth figures"). Each
-- part is a one-row table joined to the others rather than a scalar
-- subquery (DuckDB checks each of those for a second row with an aggregate
-- of its own), and the traces' rows and the installed catalog's hashes are
-- summed as hashes rather than listed in order (each list an aggregate
-- with a sort or a hash table); a set of rows then still gives one sum,
-- and a changed row another: 26 -> 18 M instructions (issue 38). The SQL
-- library, the queries and their rows' encoding are the recipe's
-- (queries.TriageRecipe). In a lake, whose triage_store_runs is empty, it
-- is never compared.
CREATE MACRO _triage_fingerprint(run) AS (
    SELECT hash(k.h, r.h, t.h, t.n, c.h, c.n, v.h)
    FROM (SELECT hash(count(*), sum(k.dur_ns), max(k.kernel_id),
                      bit_xor(hash(k.kernel_id, k.ts_ns, k.dur_ns, k.stream, k.device, k.stage, k.rank, k.name_id,
                                   k.step, k.kind, k.graph_launch, k.launch_id, k.op_id, k.site_id)),
                      sum(hash(k.name_id, n.category, n.family, n.short_name, n.display_name)::HUGEINT)) AS h
          FROM kernels k
          JOIN kernel_names n USING (name_id)
          WHERE k.run_id = run) k,
         (SELECT list(hash(label, framework, framework_evidence, model, tp_size, dp_size, ep_size, pp_size,
                           cuda_graph, source_dir)) AS h
          FROM runs WHERE run_id = run) r,
         (SELECT sum(hash(trace_id, path, rank, stage, role, framework, tp_rank, ingested_at,
                          kernel_events, memcpy_events, memset_events)::HUGEINT) AS h, count(*) AS n
          FROM traces WHERE run_id = run) t,
         (SELECT sum(hash(catalog_hash)::HUGEINT) AS h, count(*) AS n FROM fusion_catalog) c,
         (SELECT max(version) AS h FROM classifier_versions) v
);

-- _triage_current(run, rcp): whether run `run` has a saved
-- triage report (triage_store) that is current: its record
-- (triage_store_runs) was saved by a binary of recipe rcp (NULL: any) and holds
-- the fingerprint the run has now (_triage_fingerprint). The one
-- definition its readers ask
-- (queries/triage_saved.sql, triage_saved); false without a record.
CREATE MACRO _triage_current(run, rcp) AS
    coalesce(list_contains((SELECT list(r.fingerprint) FROM triage_store_runs r
                            WHERE r.run_id = run AND (rcp IS NULL OR r.recipe = rcp)),
                           _triage_fingerprint(run)), false);

-- triage_saved(run): the saved triage report of one run (id or label), a
-- row per section. Columns: rank (the rank it shows: rank 0, else the
-- run's lowest rank with GPU events), section (a field of
-- queries.TriageData: Kernels, Overlap, Fusions, Idle, ...), rows (JSON:
-- that section's rows, an array of objects whose keys are the Go fields of
-- the query's row; a nullable value is {"String"|"Int64"|"Float64"|"Bool":
-- value, "Valid": bool}), min_share, overlap_rows (the sections it was
-- made for), recipe (queries.TriageRecipe of the binary that saved it),
-- current (the run's inputs are those it was saved from; whether the
-- recipe is this binary's only the binary can say). No row when nothing
-- is saved.
CREATE MACRO triage_saved(run) AS TABLE
SELECT s.rank, s.section, s.rows::JSON AS rows, r.min_share, r.overlap_rows, r.recipe,
       _triage_current(r.run_id, NULL) AS current
FROM triage_store_runs r
JOIN triage_store s USING (run_id)
WHERE r.run_id = _run_id(run)
ORDER BY s.section;

COMMENT ON MACRO TABLE triage_saved IS 'The saved triage report of one run (id or label), a row per section: rank, section, rows (JSON), min_share, overlap_rows, recipe, current.';
