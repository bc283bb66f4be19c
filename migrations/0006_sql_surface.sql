-- 0006_sql_surface: the SQL surface describes itself to DuckDB (`COMMENT
-- ON`), so `duckdb_tables()`, `duckdb_columns()`, `duckdb_functions()` and
-- `tracehouse schema` list what each table, column and macro holds. The
-- documented entry points it added for users (`overlap_*` for overlap
-- figures by run id or label, `scope_*` for Python-scope transfer) and
-- the descriptions of macros and views are in the SQL library
-- (sqllib/overlap.sql, sqllib/scope.sql, ...); the tables' and columns'
-- descriptions stay here.
--
-- (Rewritten once after landing, when every macro and view moved into the
-- SQL library, sqllib/: its macros and their descriptions are in
-- sqllib/runs.sql, sqllib/overlap.sql, sqllib/scope.sql,
-- sqllib/classify.sql, sqllib/events.sql and sqllib/catalog.sql. A
-- warehouse never runs an applied migration again, and schema.Open creates
-- the library in every warehouse.)

COMMENT ON TABLE runs IS 'One row per profiling session of one deployment.';
COMMENT ON COLUMN runs.label IS 'The run''s name (--run, else derived from the directory).';
COMMENT ON COLUMN runs.framework IS 'sglang | vllm | trtllm | tokenspeed | unknown';
COMMENT ON COLUMN runs.framework_evidence IS 'Why that framework was chosen (or why it stayed unknown).';
COMMENT ON COLUMN runs.server_args IS 'The whole server_args.json when one was found.';
COMMENT ON COLUMN runs.cuda_graph IS 'False when the server args disable CUDA graphs, NULL when unknown.';
COMMENT ON COLUMN runs.tags IS 'Free key=value tags given at ingest or capture.';

COMMENT ON TABLE traces IS 'One row per ingested trace file.';
COMMENT ON COLUMN traces.content_hash IS 'xxh3-128 of the file''s bytes: the idempotency key.';
COMMENT ON COLUMN traces.bytes IS 'Size on disk.';
COMMENT ON COLUMN traces.json_bytes IS 'Size of the JSON after decompression.';
COMMENT ON COLUMN traces.rank_assumed IS 'True when no file-name token or distributedInfo gave the rank (rank is then 0).';
COMMENT ON COLUMN traces.stage IS 'The file''s stage: prefill | decode | mixed | unknown (kernels carry their own).';
COMMENT ON COLUMN traces.stage_source IS 'flag | filename | directory | annotations | none';
COMMENT ON COLUMN traces.role IS 'Two-trace role: mapping | formal.';
COMMENT ON COLUMN traces.merged IS 'A merged-* file holding several ranks (kernels.rank then follows the pid).';
COMMENT ON COLUMN traces.start_ns IS 'First start over the stored events (ns).';
COMMENT ON COLUMN traces.end_ns IS 'Last end over the stored events (ns).';
COMMENT ON COLUMN traces.warnings IS 'Events with cosmetic problems (kept or skipped, never fatal).';

COMMENT ON TABLE kernel_names IS 'One row per distinct GPU event name (kernels, memcpy, memset).';
COMMENT ON COLUMN kernel_names.name IS 'The name exactly as the trace wrote it.';
COMMENT ON COLUMN kernel_names.demangled IS 'Itanium-demangled form, NULL when the name is not mangled.';
COMMENT ON COLUMN kernel_names.short_name IS 'The report''s row key (triage.md section 3).';
COMMENT ON COLUMN kernel_names.base_name IS 'short_name with every template argument list removed (two-trace matching).';
COMMENT ON COLUMN kernel_names.family IS 'Classifier family; NULL until classified.';
COMMENT ON COLUMN kernel_names.category IS 'compute | communication | memory | elementwise | other';

COMMENT ON TABLE sites IS 'One row per distinct Python frame name; kernels, launches and cpu_ops point here.';
COMMENT ON COLUMN sites.display IS '`func @ path:line` with the path trimmed to the framework-relative part.';
COMMENT ON COLUMN sites.rel_path IS 'Path trimmed to python/sglang/..., vllm/..., tensorrt_llm/..., tokenspeed/...';
COMMENT ON COLUMN sites.framework IS 'Whose code: sglang | vllm | trtllm | tokenspeed | torch | python | other';
COMMENT ON COLUMN sites.is_wrapper IS 'Module __call__, _call_impl, runners, threading: never a launch site.';

COMMENT ON TABLE kernels IS 'One row per GPU event: kernel, memcpy or memset. Times in ns.';
COMMENT ON COLUMN kernels.kernel_id IS 'trace_id * 2^32 + the event''s ordinal in its file: unique in the warehouse.';
COMMENT ON COLUMN kernels.stage IS 'Per-kernel stage: annotation window, else launching annotation, else the trace''s.';
COMMENT ON COLUMN kernels.kind IS 'kernel | memcpy | memset';
COMMENT ON COLUMN kernels.ts_ns IS 'Start, absolute ns.';
COMMENT ON COLUMN kernels.dur_ns IS 'Duration, ns.';
COMMENT ON COLUMN kernels.graph_launch IS 'Launched by cudaGraphLaunch / hipGraphLaunch (a CUDA-graph replay).';
COMMENT ON COLUMN kernels.site_id IS 'Innermost serving-framework Python frame around the launch (sites).';
COMMENT ON COLUMN kernels.stream_pos IS 'Place on its (trace, device, stream) in start order, from 1.';

COMMENT ON TABLE launches IS 'One row per CUDA/HIP runtime or driver call.';
COMMENT ON COLUMN launches.site_id IS 'Innermost serving-framework Python frame on the thread at ts_ns.';
COMMENT ON TABLE cpu_ops IS 'One row per cpu_op event.';
COMMENT ON COLUMN cpu_ops.input_dims IS 'Input Dims as JSON text (record_shapes only).';
COMMENT ON TABLE py_frame_events IS 'One row per python_function event; names live in sites (see the py_frames view).';
COMMENT ON COLUMN py_frame_events.depth IS 'Nesting depth on its thread, 0 = outermost.';
COMMENT ON TABLE annotations IS 'One row per user_annotation / gpu_user_annotation (and ProfilerStep) event.';
COMMENT ON COLUMN annotations.stage IS 'prefill | decode | mixed when the name says so, else NULL.';

COMMENT ON TABLE classifier_rules IS 'Kernel-name rules of the classifier, first match wins.';
COMMENT ON TABLE family_categories IS 'The category of each classifier family.';
COMMENT ON TABLE classifier_versions IS 'Which classifier version last classified kernel_names.';
COMMENT ON TABLE fusion_catalog IS 'Installed fusion catalog entries (catalog.md).';
COMMENT ON TABLE fusion_catalog_steps IS 'The steps (keyword lists) of each fusion catalog chain.';
COMMENT ON TABLE overlap_catalog IS 'Installed overlap catalog entries: known overlap paths per framework.';
COMMENT ON TABLE kernel_overlap_store IS 'Saved per-kernel overlap of runs (read through overlap_kernels).';
COMMENT ON TABLE kernel_overlap_runs IS 'Which runs have a saved overlap, with the fingerprint it was computed for.';
COMMENT ON TABLE schema_migrations IS 'Which numbered migrations this warehouse has applied.';
