-- columns: a description of every column of the warehouse's tables and
-- views that no migration described (and better ones for a few that a
-- migration did), as DuckDB comments: `tracehouse schema NAME` and
-- duckdb_columns() show them, and a lake opened from the warehouse copies
-- them (lake.Open reads them from its freshly migrated warehouse).
--
-- They live here, not in migrations: a description is documentation that
-- evolves with the code that fills the column, and the library is applied
-- again whenever its text changes. COMMENT ON a table's column persists
-- in the warehouse; a view's is made again after the view (this module is
-- created last). TestEveryColumnDescribed (package schema) fails when a
-- column of a table or view has no description, so a new column lands
-- with one: add it here (or in the migration's own COMMENT ON).
--
-- Conventions: times are integer ns (absolute ones since the Unix epoch,
-- as kernels.ts_ns), _pct columns are percents 0-100, and each text says
-- what NULL means where the column can be NULL.


-- runs
COMMENT ON COLUMN runs.run_id IS 'The run''s id (from run_id_seq, 1, 2, ...); every other table''s run_id points here.';
COMMENT ON COLUMN runs.source_dir IS 'The run''s directory as an absolute path: where its files were found (with --run, the root given; a capture, its own directory).';
COMMENT ON COLUMN runs.model IS 'The model, from server_args.json (model_path, else model, else served_model_name); NULL when no server args name one.';
COMMENT ON COLUMN runs.tp_size IS 'Tensor-parallel size: server_args.json''s tp_size or tensor_parallel_size, else (no server args) the largest traces.tp_rank + 1; NULL when neither says.';
COMMENT ON COLUMN runs.dp_size IS 'Data-parallel size: server_args.json''s dp_size or data_parallel_size, else (no server args) the largest traces.dp_rank + 1; NULL when neither says.';
COMMENT ON COLUMN runs.ep_size IS 'Expert-parallel size: server_args.json''s ep_size, expert_parallel_size or moe_ep_size, else (no server args) the largest traces.ep_rank + 1; NULL when neither says.';
COMMENT ON COLUMN runs.pp_size IS 'Pipeline-parallel size: server_args.json''s pp_size or pipeline_parallel_size, else (no server args) the largest traces.pp_rank + 1; NULL when neither says.';
COMMENT ON COLUMN runs.ingested_at IS 'When a trace of the run was last stored (local time of the ingesting process), plus the run''s place in its batch in µs, so that runs stored together keep their order.';

-- traces
COMMENT ON COLUMN traces.trace_id IS 'The trace file''s id (from trace_id_seq); the high half of every kernel_id, launch_id and op_id of the file.';
COMMENT ON COLUMN traces.run_id IS 'The run the file belongs to (runs.run_id).';
COMMENT ON COLUMN traces.path IS 'The file''s path as ingest found it (relative when the argument given to ingest was).';
COMMENT ON COLUMN traces.compressed IS 'True when the file was gzip-compressed (.gz).';
COMMENT ON COLUMN traces.rank IS 'The global rank of the file: from a file-name token, else distributedInfo, else 0 (rank_assumed). For a merged file, its kernels carry their own rank (kernels.rank).';
COMMENT ON COLUMN traces.tp_rank IS 'Tensor-parallel rank, when the file name (TP-<n>, tp<n>) or distributedInfo gives it; else NULL.';
COMMENT ON COLUMN traces.dp_rank IS 'Data-parallel rank, when the file name (DP-<n>, dp<n>) or distributedInfo gives it; else NULL.';
COMMENT ON COLUMN traces.pp_rank IS 'Pipeline-parallel rank, when the file name (PP-<n>, pp<n>) or distributedInfo gives it; else NULL.';
COMMENT ON COLUMN traces.ep_rank IS 'Expert-parallel rank, when the file name (EP-<n>, ep<n>) or distributedInfo gives it; else NULL.';
COMMENT ON COLUMN traces.stage_source IS 'What gave the file''s stage: flag (--stage) | filename | directory | annotations (the kernels'' annotations) | none.';
COMMENT ON COLUMN traces.role IS 'Two-trace role: mapping (CUDA graphs off, lends Python scopes) | formal (the timing run).';
COMMENT ON COLUMN traces.role_source IS 'What gave the role: flag (--role) | server_args.json (its CUDA-graph setting) | default (formal).';
COMMENT ON COLUMN traces.framework IS 'The serving framework detected for this file: sglang | vllm | trtllm | tokenspeed | unknown.';
COMMENT ON COLUMN traces.framework_evidence IS 'Why that framework was chosen for the file (or why it stayed unknown); NULL when nothing was recorded.';
COMMENT ON COLUMN traces.device_name IS 'The GPU''s name (Kineto deviceProperties[0].name; nsys TARGET_INFO_GPU); NULL when the file has none.';
COMMENT ON COLUMN traces.device_properties IS 'The file''s deviceProperties array as JSON (nsys: the GPUs of TARGET_INFO_GPU); NULL when absent.';
COMMENT ON COLUMN traces.distributed_info IS 'The file''s distributedInfo object as JSON (rank, world size, backend); NULL when absent.';
COMMENT ON COLUMN traces.schema_version IS 'Kineto''s schemaVersion (nsys: the export''s schema version); NULL when absent.';
COMMENT ON COLUMN traces.trace_name IS 'Kineto''s traceName; NULL when absent and for nsys exports.';
COMMENT ON COLUMN traces.base_time_ns IS 'baseTimeNanoseconds of the file (nsys: the session start), already added to every stored time, ns; NULL when the file had none (its times were taken as epoch µs).';
COMMENT ON COLUMN traces.events IS 'Events read from the file, of every kind: the per-kind counts below add up to it.';
COMMENT ON COLUMN traces.kernel_events IS 'GPU kernel events in the file.';
COMMENT ON COLUMN traces.memcpy_events IS 'GPU memcpy events in the file.';
COMMENT ON COLUMN traces.memset_events IS 'GPU memset events in the file.';
COMMENT ON COLUMN traces.launch_events IS 'CUDA/HIP runtime and driver call events in the file (cuda_runtime, cuda_driver).';
COMMENT ON COLUMN traces.graph_launches IS 'Graph launch calls (cudaGraphLaunch, hipGraphLaunch) among the launch events.';
COMMENT ON COLUMN traces.cpu_op_events IS 'cpu_op events in the file.';
COMMENT ON COLUMN traces.py_frame_events IS 'python_function events in the file.';
COMMENT ON COLUMN traces.annotation_events IS 'user_annotation and gpu_user_annotation events in the file.';
COMMENT ON COLUMN traces.flow_events IS 'Flow events (ph s, t, f) in the file: counted, not stored.';
COMMENT ON COLUMN traces.counter_events IS 'Counter events (ph C) in the file: counted, not stored.';
COMMENT ON COLUMN traces.instant_events IS 'Instant events (ph i, I) in the file: counted, not stored.';
COMMENT ON COLUMN traces.metadata_events IS 'Metadata events (ph M: process and thread names) in the file; 0 for nsys exports.';
COMMENT ON COLUMN traces.other_events IS 'Events of any other phase (B/E, async, object), without ph or with an unknown one: counted, not stored.';
COMMENT ON COLUMN traces.warning_notes IS 'The warnings, one line each (kept or skipped event and why); NULL when there were none.';
COMMENT ON COLUMN traces.ingested_at IS 'When the file was stored (local time of the ingesting process).';
COMMENT ON COLUMN traces.ingest_ms IS 'Milliseconds the file''s ingest took (read, store and link), measured by the ingesting process.';

-- kernel_names
COMMENT ON COLUMN kernel_names.name_id IS 'The name''s id (from name_id_seq); kernels.name_id points here.';
COMMENT ON COLUMN kernel_names.short_name IS 'The name reports key rows by: the demangled (else raw) name with whitespace collapsed, hex literals as 0xADDR and a void ...(...) signature''s parameter list dropped; template arguments kept.';

-- sites
COMMENT ON COLUMN sites.site_id IS 'The site''s id (from site_id_seq); kernels, launches, cpu_ops and py_frame_events point here.';
COMMENT ON COLUMN sites.name IS 'The Python frame''s name exactly as the trace wrote it (e.g. path/to/file.py(123): func, or nn.Module: X); for nsys, the NVTX range''s name.';
COMMENT ON COLUMN sites.file IS 'The file parsed from the name (path/to/file.py(123): func); NULL for names without one (nn.Module: X, built-ins, NVTX ranges).';
COMMENT ON COLUMN sites.line IS 'The line parsed from the name; NULL when the name has none.';
COMMENT ON COLUMN sites.func IS 'The function parsed from the name; NULL when the name has none.';

-- kernels
COMMENT ON COLUMN kernels.trace_id IS 'The trace file the event came from (traces.trace_id).';
COMMENT ON COLUMN kernels.run_id IS 'The run of that file (runs.run_id), copied for filtering without a join.';
COMMENT ON COLUMN kernels.rank IS 'The event''s global rank: the file''s (traces.rank), or for a merged file the rank of its process (nsys: of its device).';
COMMENT ON COLUMN kernels.name_id IS 'The event''s name (kernel_names.name_id).';
COMMENT ON COLUMN kernels.device IS 'The GPU the event ran on (Kineto args.device; nsys: the CUPTI record''s device); NULL when the file does not say.';
COMMENT ON COLUMN kernels.stream IS 'The CUDA/HIP stream (Kineto args.stream; nsys: the CUPTI record''s stream); NULL when the file does not say.';
COMMENT ON COLUMN kernels.correlation IS 'The correlation id linking the event to its runtime launch (args.correlation); NULL when absent.';
COMMENT ON COLUMN kernels.external_id IS 'The External id linking the event to its cpu_op (args.External id); NULL when absent.';
COMMENT ON COLUMN kernels.grid IS 'The grid size as written, e.g. [128, 1, 1]; NULL for memcpy, memset and when absent.';
COMMENT ON COLUMN kernels.block IS 'The block size as written, e.g. [256, 1, 1]; NULL for memcpy, memset and when absent.';
COMMENT ON COLUMN kernels.bytes IS 'Bytes copied or set (memcpy, memset); NULL for kernels.';
COMMENT ON COLUMN kernels.launch_id IS 'The runtime call that launched it (launches.launch_id: same correlation, the latest at or before it); NULL when none was found.';
COMMENT ON COLUMN kernels.op_id IS 'The cpu_op that launched it (cpu_ops.op_id: same External id as the event, else as its launch; the latest at or before it); NULL when none.';
-- migration 0010 described site_id as a framework frame only; the site falls
-- back to other user code (ingest/link.go), as launches and cpu_ops say.
COMMENT ON COLUMN kernels.site_id IS 'Where it was launched from (sites): its launch''s site (launches.site_id), else its cpu_op''s (cpu_ops.site_id), that is the innermost Python frame open on the launching thread, serving-framework code before other user code, wrappers never; nsys: the innermost NVTX range open at its launch (sites.framework = nvtx); NULL when none, and for a CUDA-graph replay.';

-- launches
COMMENT ON COLUMN launches.launch_id IS 'trace_id * 2^32 + the event''s ordinal in its file: unique in the warehouse.';
COMMENT ON COLUMN launches.trace_id IS 'The trace file (traces.trace_id).';
COMMENT ON COLUMN launches.name IS 'The runtime or driver call, e.g. cudaLaunchKernel, cudaGraphLaunch, cudaMemcpyAsync.';
COMMENT ON COLUMN launches.ts_ns IS 'Start of the call, absolute ns.';
COMMENT ON COLUMN launches.dur_ns IS 'Duration of the call, ns.';
COMMENT ON COLUMN launches.pid IS 'The calling process id; NULL when absent.';
COMMENT ON COLUMN launches.tid IS 'The calling thread id; NULL when absent.';
COMMENT ON COLUMN launches.correlation IS 'The correlation id shared with the GPU events it launched; NULL when absent.';
COMMENT ON COLUMN launches.external_id IS 'The External id shared with the cpu_op around it; NULL when absent.';
COMMENT ON COLUMN launches.site_id IS 'The call''s Python site (sites): the innermost frame open on its thread at ts_ns, serving-framework code before other user code, wrappers never; NULL when none is open.';

-- cpu_ops
COMMENT ON COLUMN cpu_ops.op_id IS 'trace_id * 2^32 + the event''s ordinal in its file: unique in the warehouse.';
COMMENT ON COLUMN cpu_ops.trace_id IS 'The trace file (traces.trace_id).';
COMMENT ON COLUMN cpu_ops.name IS 'The operator, e.g. aten::mm.';
COMMENT ON COLUMN cpu_ops.ts_ns IS 'Start, absolute ns.';
COMMENT ON COLUMN cpu_ops.dur_ns IS 'Duration, ns.';
COMMENT ON COLUMN cpu_ops.pid IS 'The process id; NULL when absent.';
COMMENT ON COLUMN cpu_ops.tid IS 'The thread id; NULL when absent.';
COMMENT ON COLUMN cpu_ops.external_id IS 'The External id linking the op to the launches and GPU events it issued; NULL when absent.';
COMMENT ON COLUMN cpu_ops.sequence_number IS 'The autograd Sequence number (args); NULL when absent.';
COMMENT ON COLUMN cpu_ops.input_types IS 'Input type as JSON text (record_shapes only); NULL otherwise.';
COMMENT ON COLUMN cpu_ops.site_id IS 'The op''s Python site (sites): the innermost frame open on its thread at its start, serving-framework code before other user code, wrappers never; NULL when none is open.';


-- py_frame_events
COMMENT ON COLUMN py_frame_events.trace_id IS 'The trace file (traces.trace_id).';
COMMENT ON COLUMN py_frame_events.ordinal IS 'The event''s index in its trace file; with trace_id, the row''s key.';
COMMENT ON COLUMN py_frame_events.frame_id IS 'The frame''s Python id (args); NULL when absent.';
COMMENT ON COLUMN py_frame_events.parent_id IS 'The Python parent id (args): the enclosing frame''s frame_id; NULL when absent.';
COMMENT ON COLUMN py_frame_events.site_id IS 'The frame''s name (sites.site_id).';
COMMENT ON COLUMN py_frame_events.ts_ns IS 'Start, absolute ns.';
COMMENT ON COLUMN py_frame_events.dur_ns IS 'Duration, ns.';
COMMENT ON COLUMN py_frame_events.pid IS 'The process id; NULL when absent.';
COMMENT ON COLUMN py_frame_events.tid IS 'The thread id; NULL when absent.';

-- annotations
COMMENT ON COLUMN annotations.trace_id IS 'The trace file (traces.trace_id).';
COMMENT ON COLUMN annotations.name IS 'The annotation''s name as written (e.g. ProfilerStep#3, a step or stage label).';
COMMENT ON COLUMN annotations.cat IS 'The event category: user_annotation (CPU) | gpu_user_annotation (GPU).';
COMMENT ON COLUMN annotations.ts_ns IS 'Start, absolute ns.';
COMMENT ON COLUMN annotations.dur_ns IS 'Duration, ns.';
COMMENT ON COLUMN annotations.pid IS 'The process id (for gpu_user_annotation, the device); NULL when absent.';
COMMENT ON COLUMN annotations.tid IS 'The thread id (for gpu_user_annotation, the stream); NULL when absent.';

-- steps
COMMENT ON COLUMN steps.trace_id IS 'The trace file (traces.trace_id).';
COMMENT ON COLUMN steps.step IS '1, 2, ... in start order within the trace; 0 = the whole trace (source window).';
COMMENT ON COLUMN steps.source IS 'The evidence that gave the step: step_annotation (SGLang) | vllm_execute | profiler_step | gpu_annotation | kernel (--steps-by) | window (no evidence: the whole trace).';
COMMENT ON COLUMN steps.name IS 'The annotation''s name; for source kernel the pattern; empty for source window.';
COMMENT ON COLUMN steps.stage IS 'prefill | decode | mixed when the name says so, else NULL.';
COMMENT ON COLUMN steps.batch_size IS 'Sequences in the batch, when the name says so (SGLang bs=, vLLM context + generation); else NULL.';
COMMENT ON COLUMN steps.tokens IS 'Tokens of the step, when the name says so (SGLang toks= or tokens=, vLLM); else NULL.';
COMMENT ON COLUMN steps.cpu_ts_ns IS 'Start of the step''s CPU annotation, absolute ns; NULL when the step has none.';
COMMENT ON COLUMN steps.cpu_end_ns IS 'End of the step''s CPU annotation, absolute ns; NULL when the step has none.';
COMMENT ON COLUMN steps.gpu_ts_ns IS 'Start of the step''s GPU annotation window over every device, absolute ns; NULL when none.';
COMMENT ON COLUMN steps.gpu_end_ns IS 'End of the step''s GPU annotation window over every device, absolute ns; NULL when none.';
COMMENT ON COLUMN steps.edge IS 'True for the first and the last step of a trace with more than four: cut by the profiler''s start and stop, left out of per-step figures unless --keep-edges.';

-- classifier_rules
COMMENT ON COLUMN classifier_rules.rule_order IS 'The rule''s place in the ladder: the first (lowest) matching rule wins.';
COMMENT ON COLUMN classifier_rules.family IS 'The family a name matching this rule gets (family_categories.family).';
COMMENT ON COLUMN classifier_rules.keyword IS 'A lower-case literal every match of pattern contains: the pre-filter.';
COMMENT ON COLUMN classifier_rules.pattern IS 'RE2 pattern matched on the lower-cased kernel_call or kernel_function of the name (applies_to).';
COMMENT ON COLUMN classifier_rules.example IS 'A kernel name this rule exists for; tests check it gets this family.';
COMMENT ON COLUMN classifier_rules.note IS 'Why the rule exists, and which trap its bounds avoid.';

-- classifier_versions
COMMENT ON COLUMN classifier_versions.version IS '1, 2, ...: bumped by every migration that changes the rules.';
COMMENT ON COLUMN classifier_versions.migration IS 'The migration that installed this version, as NNNN_name.';
COMMENT ON COLUMN classifier_versions.description IS 'What changed, for the reclassify report.';

-- family_categories
COMMENT ON COLUMN family_categories.family IS 'A family of classifier_rules, or other.';
COMMENT ON COLUMN family_categories.category IS 'The family''s category: compute | communication | memory | elementwise | other.';

-- schema_migrations
COMMENT ON COLUMN schema_migrations.version IS 'The migration''s number (NNNN of migrations/NNNN_name.sql).';
COMMENT ON COLUMN schema_migrations.name IS 'The migration''s name (NNNN_name).';
COMMENT ON COLUMN schema_migrations.applied_at IS 'When it was applied to this warehouse (local time).';

-- fusion_catalog
-- (migration 0006's table text named a page outside the repository)
COMMENT ON TABLE fusion_catalog IS 'Installed fusion catalog entries (catalog/catalog.yaml, or the file given with --catalog).';
COMMENT ON COLUMN fusion_catalog.id IS 'Stable slug of the entry, e.g. sglang-flashinfer-allreduce-fusion.';
COMMENT ON COLUMN fusion_catalog.ordinal IS 'Position in the catalog file, from 0: the file''s order, for stable output.';
COMMENT ON COLUMN fusion_catalog.name IS 'Display name of the fusion.';
COMMENT ON COLUMN fusion_catalog.framework IS 'Where the fused path lives: sglang | vllm | trtllm | tokenspeed | flashinfer.';
COMMENT ON COLUMN fusion_catalog.origin IS 'mainline | upstream | inflight (an open PR, cited in sources).';
COMMENT ON COLUMN fusion_catalog.fused IS 'Keywords of the fused kernel: a kernel matching one means the fused path runs.';
COMMENT ON COLUMN fusion_catalog.steps IS 'Number of chain steps in fusion_catalog_steps; 0 = no split chain known (the entry can only be reported as already fused or elsewhere).';
COMMENT ON COLUMN fusion_catalog.ordered IS 'True when the steps must appear in step_no order on the stream.';
COMMENT ON COLUMN fusion_catalog.max_gap_ns IS 'Largest idle gap between consecutive steps on one stream, ns (the file''s max_gap_us x 1000).';
COMMENT ON COLUMN fusion_catalog.max_between IS 'How many unrelated kernels may sit between two consecutive steps.';
COMMENT ON COLUMN fusion_catalog.models_any IS 'Model-path tokens: the entry applies only if one matches the run''s model (empty = any model).';
COMMENT ON COLUMN fusion_catalog.models_none IS 'Model-path tokens: the entry never applies if one matches the run''s model.';
COMMENT ON COLUMN fusion_catalog.min_tp IS 'Smallest tensor-parallel size the entry applies to.';
COMMENT ON COLUMN fusion_catalog.min_share IS 'Percent (0-100) of the stage''s summed kernel time under which a match is dropped.';
COMMENT ON COLUMN fusion_catalog.likely_share IS 'Percent (0-100) of the stage''s summed kernel time at or above which a match is confirmed.';
COMMENT ON COLUMN fusion_catalog.priority IS 'Conflict resolution: the higher priority wins.';
COMMENT ON COLUMN fusion_catalog.subsumes IS 'Ids of fusion entries this one hides when it is kept.';
COMMENT ON COLUMN fusion_catalog.sources IS 'File paths and PR #N references where the fused path lives.';
COMMENT ON COLUMN fusion_catalog.switch IS 'Server flag, environment variable or config key that turns the fused path on; NULL when unknown.';
COMMENT ON COLUMN fusion_catalog.rationale IS 'One sentence on what fusing saves.';
COMMENT ON COLUMN fusion_catalog.catalog_version IS 'Format version of the catalog file the rows came from.';
COMMENT ON COLUMN fusion_catalog.catalog_hash IS 'sha256 of the catalog''s content (hex): installing rewrites the catalog tables when it differs.';

-- fusion_catalog_steps
COMMENT ON COLUMN fusion_catalog_steps.id IS 'The fusion entry (fusion_catalog.id).';
COMMENT ON COLUMN fusion_catalog_steps.step_no IS 'Position in the chain, from 1.';
COMMENT ON COLUMN fusion_catalog_steps.keywords IS 'Alternatives: a kernel matching any one of them can fill this step.';

-- overlap_catalog
COMMENT ON COLUMN overlap_catalog.id IS 'Stable slug of the entry, e.g. sglang-single-batch-overlap.';
COMMENT ON COLUMN overlap_catalog.ordinal IS 'Position in the catalog file, from 0.';
COMMENT ON COLUMN overlap_catalog.name IS 'Display name, shown as Known path: <name> (<framework>, <origin>).';
COMMENT ON COLUMN overlap_catalog.framework IS 'Where the overlap path lives: sglang | vllm | trtllm | tokenspeed | flashinfer.';
COMMENT ON COLUMN overlap_catalog.origin IS 'mainline | upstream | inflight (an open PR, cited in sources).';
COMMENT ON COLUMN overlap_catalog.keywords IS 'Kernel names or sites seen in the overlap window.';
COMMENT ON COLUMN overlap_catalog.sources IS 'File paths and PR #N references where the overlap path lives.';
COMMENT ON COLUMN overlap_catalog.switch IS 'Server flag, environment variable or config key that turns the path on; NULL when unknown.';
COMMENT ON COLUMN overlap_catalog.rationale IS 'One sentence on what overlapping saves.';
COMMENT ON COLUMN overlap_catalog.catalog_version IS 'Format version of the catalog file the rows came from.';
COMMENT ON COLUMN overlap_catalog.catalog_hash IS 'sha256 of the catalog''s content (hex), as in fusion_catalog.';

-- kernel_overlap_store
COMMENT ON COLUMN kernel_overlap_store.kernel_id IS 'The GPU event (kernels.kernel_id).';
COMMENT ON COLUMN kernel_overlap_store.trace_id IS 'Its trace file (traces.trace_id).';
COMMENT ON COLUMN kernel_overlap_store.run_id IS 'Its run (runs.run_id).';
COMMENT ON COLUMN kernel_overlap_store.rank IS 'Its rank (kernels.rank).';
COMMENT ON COLUMN kernel_overlap_store.stage IS 'Its per-kernel stage (kernels.stage): overlap is judged within one (trace, stage, device).';
COMMENT ON COLUMN kernel_overlap_store.device IS 'Its device (kernels.device); NULL is one more, unnamed device.';
COMMENT ON COLUMN kernel_overlap_store.stream IS 'Its stream (kernels.stream); NULL is one more, unnamed stream.';
COMMENT ON COLUMN kernel_overlap_store.name_id IS 'Its name (kernel_names.name_id).';
COMMENT ON COLUMN kernel_overlap_store.ts_ns IS 'Start, absolute ns (kernels.ts_ns).';
COMMENT ON COLUMN kernel_overlap_store.dur_ns IS 'Duration, ns (kernels.dur_ns).';
COMMENT ON COLUMN kernel_overlap_store.hidden_ns IS 'ns of dur_ns during which an event on another stream of the same (trace, stage, device) was running.';
COMMENT ON COLUMN kernel_overlap_store.hidden_by_compute_ns IS 'ns of hidden_ns during which one of those events was a compute kernel (kernel_names.category = compute).';
COMMENT ON COLUMN kernel_overlap_store.exclusive_ns IS 'dur_ns - hidden_ns, ns: the time nothing on another stream ran (same-stream overlap stays exclusive).';
COMMENT ON COLUMN kernel_overlap_store.start_rank IS 'Position of the kernel''s start among the starts swept together (by group, time, kernel_id): consecutive within each (trace, stage, device).';
COMMENT ON COLUMN kernel_overlap_store.starts_before_end IS 'How many starts precede the kernel''s end in that order: the kernels with start_rank in (start_rank, starts_before_end] start while it runs.';
COMMENT ON COLUMN kernel_overlap_store.union_share_ns IS 'GPU busy time (union of the group''s intervals) from each of the kernel''s two points to the group''s next point, ns: summed over a group or stage it gives the busy time.';
COMMENT ON COLUMN kernel_overlap_store.prev_kernel_id IS 'The kernel that starts just before this one on the same stream of the same (trace, stage, device) (ties by kernel_id); NULL for the first.';
COMMENT ON COLUMN kernel_overlap_store.next_kernel_id IS 'The kernel that starts just after this one on the same stream of the same (trace, stage, device) (ties by kernel_id); NULL for the last.';

-- kernel_overlap_runs
COMMENT ON COLUMN kernel_overlap_runs.run_id IS 'A run whose per-kernel overlap is saved in kernel_overlap_store (runs.run_id).';
COMMENT ON COLUMN kernel_overlap_runs.fingerprint IS '_overlap_fingerprint of the run when it was saved: the copy is read only while the run''s current fingerprint equals it (0 in a lake).';
COMMENT ON COLUMN kernel_overlap_runs.stored_at IS 'When the copy was saved (local time).';

-- device_busy_store
COMMENT ON COLUMN device_busy_store.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN device_busy_store.trace_id IS 'The trace file (traces.trace_id).';
COMMENT ON COLUMN device_busy_store.rank IS 'The rank (kernels.rank).';
COMMENT ON COLUMN device_busy_store.stage IS 'The per-kernel stage (kernels.stage).';
COMMENT ON COLUMN device_busy_store.device IS 'The device; NULL for the events whose file gives none.';
COMMENT ON COLUMN device_busy_store.kernels IS 'Number of GPU events.';
COMMENT ON COLUMN device_busy_store.kernel_ns IS 'Summed dur_ns, ns (overlapping events each counted).';
COMMENT ON COLUMN device_busy_store.busy_ns IS 'GPU busy time, ns: the length of the union of the events'' intervals.';
COMMENT ON COLUMN device_busy_store.first_ns IS 'Earliest start, absolute ns.';
COMMENT ON COLUMN device_busy_store.last_end_ns IS 'Latest end, absolute ns.';
COMMENT ON COLUMN device_busy_store.streams IS 'Number of distinct streams (a NULL stream counts as one).';

-- step_kernel_store
COMMENT ON COLUMN step_kernel_store.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN step_kernel_store.trace_id IS 'The trace file (traces.trace_id).';
COMMENT ON COLUMN step_kernel_store.rank IS 'The rank (kernels.rank).';
COMMENT ON COLUMN step_kernel_store.stage IS 'The per-kernel stage (kernels.stage).';
COMMENT ON COLUMN step_kernel_store.step IS 'The step (steps.step of the same trace).';
COMMENT ON COLUMN step_kernel_store.name_id IS 'The kernel name (kernel_names.name_id).';
COMMENT ON COLUMN step_kernel_store.launches IS 'GPU events of that name in the step.';
COMMENT ON COLUMN step_kernel_store.dur_ns IS 'Their summed dur_ns, ns.';
COMMENT ON COLUMN step_kernel_store.hidden_ns IS 'Their summed hidden_ns (time under another stream), ns.';
COMMENT ON COLUMN step_kernel_store.hidden_by_compute_ns IS 'Their summed hidden_by_compute_ns, ns.';

-- step_total_store
COMMENT ON COLUMN step_total_store.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN step_total_store.trace_id IS 'The trace file (traces.trace_id).';
COMMENT ON COLUMN step_total_store.rank IS 'The rank (kernels.rank).';
COMMENT ON COLUMN step_total_store.stage IS 'The per-kernel stage (kernels.stage).';
COMMENT ON COLUMN step_total_store.step IS 'The step (steps.step of the same trace).';
COMMENT ON COLUMN step_total_store.kernels IS 'GPU events of the step.';
COMMENT ON COLUMN step_total_store.kernel_ns IS 'Their summed dur_ns, ns (overlapping events each counted).';
COMMENT ON COLUMN step_total_store.busy_ns IS 'GPU busy time, ns: the union of the step''s event intervals per device, summed over devices.';
COMMENT ON COLUMN step_total_store.first_ns IS 'First start of the step''s events, absolute ns.';
COMMENT ON COLUMN step_total_store.last_end_ns IS 'Last end of the step''s events, absolute ns.';
COMMENT ON COLUMN step_total_store.window_ns IS 'last_end_ns - first_ns, ns: the step time (its GPU window).';
COMMENT ON COLUMN step_total_store.exposed_comm_ns IS 'Communication time not hidden under compute, ns: summed dur_ns - hidden_by_compute_ns of the step''s communication events.';

-- step_store_runs
COMMENT ON COLUMN step_store_runs.run_id IS 'A run whose step aggregates (and idle rows) are saved (runs.run_id).';
COMMENT ON COLUMN step_store_runs.fingerprint IS '_steps_fingerprint of the run when saved: the copies are read only while the current one equals it (0 in a lake).';
COMMENT ON COLUMN step_store_runs.stored_at IS 'When the copies were saved (local time).';

-- fusion_match_store
COMMENT ON COLUMN fusion_match_store.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN fusion_match_store.rank IS 'The rank the rows were computed for, as a single-trace report of that rank alone.';
COMMENT ON COLUMN fusion_match_store.stage IS 'The per-kernel stage of the row.';
COMMENT ON COLUMN fusion_match_store.pattern IS 'The fusion entry''s name (fusion_catalog.name).';
COMMENT ON COLUMN fusion_match_store.id IS 'The fusion entry (fusion_catalog.id).';
COMMENT ON COLUMN fusion_match_store.status IS 'opportunity (split chain on a trace of the entry''s own framework) | elsewhere (split chain another framework fuses) | already fused (a fused kernel runs).';
COMMENT ON COLUMN fusion_match_store.confidence IS 'confirmed (share_pct >= likely_share, or 4 or more occurrences) | candidate.';
COMMENT ON COLUMN fusion_match_store.related_ns IS 'Summed duration of the related kernels (the accepted chain occurrences, or the fused kernels), ns.';
COMMENT ON COLUMN fusion_match_store.share_pct IS 'related_ns as a percent (0-100) of the summed duration of every GPU event of the stage.';
COMMENT ON COLUMN fusion_match_store.occurrences IS 'Chain occurrences, or fused kernels.';
COMMENT ON COLUMN fusion_match_store.evidence IS 'The related kernels'' short names, in chain-step order (stream order for unordered entries), then by time.';
COMMENT ON COLUMN fusion_match_store.evidence_share_pct IS 'Each evidence kernel''s related time as a percent (0-100) of the stage''s summed kernel time, same order.';
COMMENT ON COLUMN fusion_match_store.locations IS 'The evidence kernels'' Python sites (display form), same order; kernels without a site are left out.';
COMMENT ON COLUMN fusion_match_store.candidate_path IS '<framework>: <first source>, where the fused path lives.';
COMMENT ON COLUMN fusion_match_store.sources IS 'The entry''s sources (fusion_catalog.sources).';
COMMENT ON COLUMN fusion_match_store.rationale IS 'The entry''s rationale (fusion_catalog.rationale).';
COMMENT ON COLUMN fusion_match_store.switch IS 'The entry''s switch (fusion_catalog.switch); NULL when unknown.';
COMMENT ON COLUMN fusion_match_store.origin IS 'The entry''s origin: mainline | upstream | inflight.';
COMMENT ON COLUMN fusion_match_store.framework IS 'The entry''s framework (fusion_catalog.framework).';
COMMENT ON COLUMN fusion_match_store.priority IS 'The entry''s priority (fusion_catalog.priority).';
COMMENT ON COLUMN fusion_match_store.steps IS 'The entry''s chain length (fusion_catalog.steps).';

-- fusion_store_runs
COMMENT ON COLUMN fusion_store_runs.run_id IS 'A run with saved fuse-pattern rows (runs.run_id).';
COMMENT ON COLUMN fusion_store_runs.rank IS 'The rank they were saved for.';
COMMENT ON COLUMN fusion_store_runs.fingerprint IS '_fusion_fingerprint of the run when saved (its overlap inputs and the catalog): the rows are read only while it is current.';
COMMENT ON COLUMN fusion_store_runs.stored_at IS 'When the rows were saved (local time).';

-- overlap_row_store
COMMENT ON COLUMN overlap_row_store.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN overlap_row_store.rank IS 'The rank the rows were computed for, as a single-trace report of that rank alone.';
COMMENT ON COLUMN overlap_row_store.stage IS 'The per-kernel stage of the row.';
COMMENT ON COLUMN overlap_row_store.priority IS 'P1 (try overlap or fusion) .. P5 (skip): the first rule of the triage ladder that applies.';
COMMENT ON COLUMN overlap_row_store.verdict IS 'headroom | low-roi-hidden | hidden | negligible (total_ns under min_dur_ns).';
COMMENT ON COLUMN overlap_row_store.kernel IS 'The kernel short name (kernel_names.short_name) the row sums.';
COMMENT ON COLUMN overlap_row_store.family IS 'Its family (that of its raw name with the most GPU time); other when unclassified.';
COMMENT ON COLUMN overlap_row_store.category IS 'Its category: compute | communication | memory | elementwise | other.';
COMMENT ON COLUMN overlap_row_store.scope IS 'The short name''s dominant Python site (display form), graph replay @ <frame> for CUDA-graph replays, else unmapped.';
COMMENT ON COLUMN overlap_row_store.scope_match IS 'How the scope was found: self (the kernels'' own sites) | graph-replay (the graph launch''s frame).';
COMMENT ON COLUMN overlap_row_store.launches IS 'GPU events of that short name.';
COMMENT ON COLUMN overlap_row_store.total_ns IS 'Their summed dur_ns, ns.';
COMMENT ON COLUMN overlap_row_store.hidden_ns IS 'Their summed hidden_ns (under another stream), ns.';
COMMENT ON COLUMN overlap_row_store.hidden_by_compute_ns IS 'Their summed hidden_by_compute_ns, ns.';
COMMENT ON COLUMN overlap_row_store.exclusive_ns IS 'Their summed exclusive_ns, ns.';
COMMENT ON COLUMN overlap_row_store.busy_ns IS 'GPU busy time of the stage (union of intervals per device, summed), ns: the share''s denominator.';
COMMENT ON COLUMN overlap_row_store.busy_share_pct IS 'total_ns as a percent (0-100) of busy_ns.';
COMMENT ON COLUMN overlap_row_store.exclusive_pct IS 'exclusive_ns as a percent (0-100) of total_ns.';
COMMENT ON COLUMN overlap_row_store.hidden_pct IS 'hidden_ns as a percent (0-100) of total_ns.';
COMMENT ON COLUMN overlap_row_store.dominant IS 'The short name of the other-stream kernels overlapping this one longest in total; NULL when nothing on another stream overlaps it.';
COMMENT ON COLUMN overlap_row_store.dep_risk IS 'Dependency signal of the longest instance: high | unclear | low.';
COMMENT ON COLUMN overlap_row_store.recommendation IS 'try overlap | try fusion | check deps | manual check | observe later | skip overlap.';
COMMENT ON COLUMN overlap_row_store.longest_kernel_id IS 'The longest instance (kernels.kernel_id; ties: the earlier start, then the trace''s path, then its content hash, then the kernel''s place in its trace: never the id alone, which follows the order traces were ingested in).';
COMMENT ON COLUMN overlap_row_store.longest_trace_id IS 'Its trace file (traces.trace_id).';
COMMENT ON COLUMN overlap_row_store.longest_ts_ns IS 'Its start, absolute ns.';
COMMENT ON COLUMN overlap_row_store.longest_dur_ns IS 'Its duration, ns.';
COMMENT ON COLUMN overlap_row_store.longest_device IS 'Its device; NULL when its file gives none.';
COMMENT ON COLUMN overlap_row_store.longest_stream IS 'Its stream; NULL when its file gives none.';

-- overlap_row_runs
COMMENT ON COLUMN overlap_row_runs.run_id IS 'A run with saved overlap-opportunity rows (runs.run_id).';
COMMENT ON COLUMN overlap_row_runs.rank IS 'The rank they were saved for.';
COMMENT ON COLUMN overlap_row_runs.min_dur_ns IS 'The verdict floor (total >= min_dur_ns) the rows were computed with, ns.';
COMMENT ON COLUMN overlap_row_runs.fingerprint IS '_overlap_rows_fingerprint of the run when saved: the rows are read only while it is current.';
COMMENT ON COLUMN overlap_row_runs.stored_at IS 'When the rows were saved (local time).';

-- idle_step_store
COMMENT ON COLUMN idle_step_store.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN idle_step_store.trace_id IS 'The trace file (traces.trace_id).';
COMMENT ON COLUMN idle_step_store.rank IS 'The rank (kernels.rank).';
COMMENT ON COLUMN idle_step_store.stage IS 'The per-kernel stage (kernels.stage).';
COMMENT ON COLUMN idle_step_store.step IS 'The step (steps.step of the same trace).';
COMMENT ON COLUMN idle_step_store.device IS 'The device; NULL for events whose file gives none.';
COMMENT ON COLUMN idle_step_store.scope IS 'device (the union of the device''s streams) | stream (one stream alone).';
COMMENT ON COLUMN idle_step_store.stream IS 'The stream for scope stream; NULL for scope device.';
COMMENT ON COLUMN idle_step_store.events IS 'GPU events of the step in this scope.';
COMMENT ON COLUMN idle_step_store.first_ns IS 'First start, absolute ns.';
COMMENT ON COLUMN idle_step_store.last_end_ns IS 'Last end, absolute ns.';
COMMENT ON COLUMN idle_step_store.window_ns IS 'last_end_ns - first_ns, ns (scope device: the step time on that device).';
COMMENT ON COLUMN idle_step_store.busy_ns IS 'The union of the events'' intervals, ns.';
COMMENT ON COLUMN idle_step_store.idle_ns IS 'window_ns - busy_ns, ns: the gaps'' sum.';
COMMENT ON COLUMN idle_step_store.gaps IS 'Number of gaps.';
COMMENT ON COLUMN idle_step_store.host_bound_ns IS 'Gaps whose next event''s launch call began after the gap began (the GPU waited for the CPU), ns.';
COMMENT ON COLUMN idle_step_store.launch_latency_ns IS 'Gaps shorter than the launch gap (default 30 µs) whose next event was launched before the gap began, ns.';
COMMENT ON COLUMN idle_step_store.sync_ns IS 'Gaps during which the thread that launched the next event sat in a blocking call (synchronize, blocking memcpy) begun before that launch (the CPU waited for the GPU), ns.';
COMMENT ON COLUMN idle_step_store.graph_internal_ns IS 'Gaps between two events of the same CUDA/HIP graph replay, ns.';
COMMENT ON COLUMN idle_step_store.other_ns IS 'Every other gap, including a next event with no launch, ns; the five causes add up to idle_ns.';

-- idle_gap_store
COMMENT ON COLUMN idle_gap_store.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN idle_gap_store.trace_id IS 'The trace file (traces.trace_id).';
COMMENT ON COLUMN idle_gap_store.rank IS 'The rank (kernels.rank).';
COMMENT ON COLUMN idle_gap_store.stage IS 'The per-kernel stage (kernels.stage).';
COMMENT ON COLUMN idle_gap_store.step IS 'The step the gap is in (steps.step; edge steps left out).';
COMMENT ON COLUMN idle_gap_store.device IS 'The device; NULL for events whose file gives none.';
COMMENT ON COLUMN idle_gap_store.kernel_id IS 'The event the gap ends at (next).';
COMMENT ON COLUMN idle_gap_store.prev_kernel_id IS 'The event whose end began the gap (prev: the latest end before it; ties by the higher kernel_id).';
COMMENT ON COLUMN idle_gap_store.gap_start_ns IS 'The gap''s start (prev''s end), absolute ns.';
COMMENT ON COLUMN idle_gap_store.gap_ns IS 'The gap''s length (next''s start - gap_start_ns), ns, > 0.';
COMMENT ON COLUMN idle_gap_store.cause IS 'graph_internal | sync | host_bound | launch_latency | other.';
COMMENT ON COLUMN idle_gap_store.launch_id IS 'next''s launch (launches.launch_id); NULL when it has none.';
COMMENT ON COLUMN idle_gap_store.launch_ts_ns IS 'The start of that launch, absolute ns; NULL when there is none.';
COMMENT ON COLUMN idle_gap_store.next_name_id IS 'next''s name (kernel_names.name_id).';
COMMENT ON COLUMN idle_gap_store.prev_name_id IS 'prev''s name (kernel_names.name_id).';
COMMENT ON COLUMN idle_gap_store.site_id IS 'next''s Python site (its own, else its launch''s): for a host-bound gap, where the late launch came from; NULL when none.';

-- comm_overlap_store
COMMENT ON COLUMN comm_overlap_store.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN comm_overlap_store.trace_id IS 'The trace file (traces.trace_id).';
COMMENT ON COLUMN comm_overlap_store.rank IS 'The rank (kernels.rank).';
COMMENT ON COLUMN comm_overlap_store.stage IS 'The per-kernel stage (kernels.stage).';
COMMENT ON COLUMN comm_overlap_store.device IS 'The device; NULL for events whose file gives none.';
COMMENT ON COLUMN comm_overlap_store.comm_ns IS 'The union of the communication events'' intervals (category communication) on the device, ns.';
COMMENT ON COLUMN comm_overlap_store.comp_ns IS 'The union of the computation events'' intervals (every category but communication and memory), ns.';
COMMENT ON COLUMN comm_overlap_store.overlap_ns IS 'The time inside both unions, ns.';

-- comm_overlap_runs
COMMENT ON COLUMN comm_overlap_runs.run_id IS 'A run whose comm_overlap_store rows were saved with its per-kernel overlap (runs.run_id).';
COMMENT ON COLUMN comm_overlap_runs.fingerprint IS '_overlap_fingerprint of the run when they were swept: the step aggregates'' save keeps them only while the run''s current fingerprint equals it.';
COMMENT ON COLUMN comm_overlap_runs.stored_at IS 'When they were saved (local time).';

-- launch_kernel_store
COMMENT ON COLUMN launch_kernel_store.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN launch_kernel_store.rank IS 'The rank (kernels.rank).';
COMMENT ON COLUMN launch_kernel_store.stage IS 'The per-kernel stage (kernels.stage).';
COMMENT ON COLUMN launch_kernel_store.short_name IS 'The kernel''s short name (kernel_names.short_name).';
COMMENT ON COLUMN launch_kernel_store.events IS 'GPU events.';
COMMENT ON COLUMN launch_kernel_store.launched IS 'Those with a launch of their own (not replayed by a graph, correlated).';
COMMENT ON COLUMN launch_kernel_store.delay_p50_ns IS 'Median launch-to-start delay (start minus the launch call''s end) over the launched events, ns.';
COMMENT ON COLUMN launch_kernel_store.delay_p90_ns IS 'Its p90, ns.';
COMMENT ON COLUMN launch_kernel_store.delay_max_ns IS 'Its maximum, ns.';
COMMENT ON COLUMN launch_kernel_store.launch_p50_ns IS 'Median duration of the launch call, ns.';
COMMENT ON COLUMN launch_kernel_store.launch_max_ns IS 'Its maximum, ns.';
COMMENT ON COLUMN launch_kernel_store.launch_bound IS 'Launched events shorter than their launch call.';
COMMENT ON COLUMN launch_kernel_store.short IS 'Events under 10 us.';

-- launch_stage_store
COMMENT ON COLUMN launch_stage_store.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN launch_stage_store.rank IS 'The rank (kernels.rank).';
COMMENT ON COLUMN launch_stage_store.stage IS 'The per-kernel stage (kernels.stage).';
COMMENT ON COLUMN launch_stage_store.events IS 'GPU events.';
COMMENT ON COLUMN launch_stage_store.launched IS 'Those with a launch of their own (not replayed by a graph, correlated).';
COMMENT ON COLUMN launch_stage_store.short IS 'Events under short_ns.';
COMMENT ON COLUMN launch_stage_store.short_pct IS '100 * short / events.';
COMMENT ON COLUMN launch_stage_store.launch_bound IS 'Launched events shorter than their launch call.';
COMMENT ON COLUMN launch_stage_store.launch_bound_pct IS '100 * launch_bound / launched; NULL when none was launched.';
COMMENT ON COLUMN launch_stage_store.delay_p50_ns IS 'Median launch-to-start delay (start minus the launch call''s end) over the launched events, ns.';
COMMENT ON COLUMN launch_stage_store.delay_p90_ns IS 'Its p90, ns.';
COMMENT ON COLUMN launch_stage_store.delay_max_ns IS 'Its maximum, ns.';
COMMENT ON COLUMN launch_stage_store.launch_p50_ns IS 'Median duration of the launch call, ns.';
COMMENT ON COLUMN launch_stage_store.launch_max_ns IS 'Its maximum, ns.';
COMMENT ON COLUMN launch_stage_store.short_ns IS 'The short-event threshold used, ns (10 us).';

-- kernel_spread_store
COMMENT ON COLUMN kernel_spread_store.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN kernel_spread_store.rank IS 'The rank (kernels.rank).';
COMMENT ON COLUMN kernel_spread_store.stage IS 'The per-kernel stage (kernels.stage).';
COMMENT ON COLUMN kernel_spread_store.short_name IS 'The kernel''s short name (kernel_names.short_name).';
COMMENT ON COLUMN kernel_spread_store.events IS 'GPU events.';
COMMENT ON COLUMN kernel_spread_store.min_ns IS 'Shortest duration, ns.';
COMMENT ON COLUMN kernel_spread_store.p50_ns IS 'Median duration (interpolated), ns.';
COMMENT ON COLUMN kernel_spread_store.p90_ns IS 'p90 of the duration (interpolated), ns.';
COMMENT ON COLUMN kernel_spread_store.max_ns IS 'Longest duration, ns.';
COMMENT ON COLUMN kernel_spread_store.stddev_ns IS 'Sample standard deviation of the duration, ns; NULL for one event.';

-- kernel_events
COMMENT ON COLUMN kernel_events.kernel_id IS 'trace_id * 2^32 + the event''s ordinal in its file (kernels.kernel_id).';
COMMENT ON COLUMN kernel_events.run IS 'The run''s label (runs.label).';
COMMENT ON COLUMN kernel_events.framework IS 'The run''s framework (runs.framework): sglang | vllm | trtllm | tokenspeed | unknown.';
COMMENT ON COLUMN kernel_events.model IS 'The run''s model (runs.model); NULL when unknown.';
COMMENT ON COLUMN kernel_events.path IS 'The trace file''s path (traces.path).';
COMMENT ON COLUMN kernel_events.trace_id IS 'The trace file (traces.trace_id).';
COMMENT ON COLUMN kernel_events.rank IS 'The event''s global rank (kernels.rank).';
COMMENT ON COLUMN kernel_events.stage IS 'The event''s per-kernel stage (kernels.stage): prefill | decode | mixed | unknown.';
COMMENT ON COLUMN kernel_events.role IS 'The trace file''s two-trace role (traces.role): mapping | formal.';
COMMENT ON COLUMN kernel_events.kind IS 'kernel | memcpy | memset.';
COMMENT ON COLUMN kernel_events.name IS 'The name exactly as the trace wrote it (kernel_names.name).';
COMMENT ON COLUMN kernel_events.short_name IS 'The name reports key rows by (kernel_names.short_name).';
COMMENT ON COLUMN kernel_events.family IS 'Classifier family (kernel_names.family); NULL until classified.';
COMMENT ON COLUMN kernel_events.category IS 'compute | communication | memory | elementwise | other (kernel_names.category); NULL until classified.';
COMMENT ON COLUMN kernel_events.ts_ns IS 'Start, absolute ns.';
COMMENT ON COLUMN kernel_events.dur_ns IS 'Duration, ns.';
COMMENT ON COLUMN kernel_events.dur_us IS 'Duration, µs (dur_ns / 1000.0, fractional).';
COMMENT ON COLUMN kernel_events.device IS 'The GPU (kernels.device); NULL when the file does not say.';
COMMENT ON COLUMN kernel_events.stream IS 'The stream (kernels.stream); NULL when the file does not say.';
COMMENT ON COLUMN kernel_events.correlation IS 'Correlation id with its launch (kernels.correlation); NULL when absent.';
COMMENT ON COLUMN kernel_events.external_id IS 'External id with its cpu_op (kernels.external_id); NULL when absent.';
COMMENT ON COLUMN kernel_events.grid IS 'Grid size as written (kernels.grid); NULL for memcpy, memset and when absent.';
COMMENT ON COLUMN kernel_events.block IS 'Block size as written (kernels.block); NULL for memcpy, memset and when absent.';
COMMENT ON COLUMN kernel_events.bytes IS 'Bytes copied or set (memcpy, memset); NULL for kernels.';
COMMENT ON COLUMN kernel_events.graph_launch IS 'Launched by cudaGraphLaunch / hipGraphLaunch (a CUDA-graph replay).';
COMMENT ON COLUMN kernel_events.launch_id IS 'The runtime call that launched it (launches.launch_id); NULL when none was found.';
COMMENT ON COLUMN kernel_events.op_id IS 'The cpu_op that launched it (cpu_ops.op_id); NULL when none was found.';
COMMENT ON COLUMN kernel_events.cpu_op IS 'That cpu_op''s name (cpu_ops.name); NULL when none was found.';
COMMENT ON COLUMN kernel_events.site_id IS 'Its launch site (kernels.site_id); NULL when unmapped.';
COMMENT ON COLUMN kernel_events.site IS 'The site''s display form, func @ path:line (sites.display); NULL when unmapped.';
COMMENT ON COLUMN kernel_events.site_file IS 'The site''s file (sites.file); NULL when unmapped or the site has no file.';
COMMENT ON COLUMN kernel_events.site_line IS 'The site''s line (sites.line); NULL when unmapped or the site has no line.';
COMMENT ON COLUMN kernel_events.site_func IS 'The site''s function (sites.func); NULL when unmapped or the site has none.';

-- py_frames
COMMENT ON COLUMN py_frames.trace_id IS 'The trace file (traces.trace_id).';
COMMENT ON COLUMN py_frames.ordinal IS 'The event''s index in its trace file; with trace_id, the row''s key.';
COMMENT ON COLUMN py_frames.frame_id IS 'The frame''s Python id; NULL when absent.';
COMMENT ON COLUMN py_frames.parent_id IS 'The enclosing frame''s Python id (Python parent id); NULL when absent.';
COMMENT ON COLUMN py_frames.name IS 'The frame''s name as written (sites.name).';
COMMENT ON COLUMN py_frames.file IS 'The file parsed from the name (sites.file); NULL when the name has none.';
COMMENT ON COLUMN py_frames.line IS 'The line parsed from the name (sites.line); NULL when the name has none.';
COMMENT ON COLUMN py_frames.func IS 'The function parsed from the name (sites.func); NULL when the name has none.';
COMMENT ON COLUMN py_frames.ts_ns IS 'Start, absolute ns.';
COMMENT ON COLUMN py_frames.dur_ns IS 'Duration, ns.';
COMMENT ON COLUMN py_frames.pid IS 'The process id; NULL when absent.';
COMMENT ON COLUMN py_frames.tid IS 'The thread id; NULL when absent.';
COMMENT ON COLUMN py_frames.depth IS 'Nesting depth on its thread, 0 = outermost.';
COMMENT ON COLUMN py_frames.site_id IS 'The frame''s name (sites.site_id).';

-- catalog_keywords
COMMENT ON COLUMN catalog_keywords.kind IS 'fused (a fusion''s fused keyword) | step (a chain step''s alternative) | overlap (an overlap entry''s keyword).';
COMMENT ON COLUMN catalog_keywords.id IS 'The fusion or overlap entry (fusion_catalog.id or overlap_catalog.id).';
COMMENT ON COLUMN catalog_keywords.step_no IS 'The chain step (from 1) for kind step; 0 for fused and overlap keywords.';
COMMENT ON COLUMN catalog_keywords.keyword IS 'The keyword as the catalog wrote it.';
COMMENT ON COLUMN catalog_keywords.keyword_lower IS 'The keyword lower-cased.';
COMMENT ON COLUMN catalog_keywords.keyword_compact IS 'The keyword lower-cased with every character but a-z and 0-9 removed.';

-- kernel_overlap
COMMENT ON COLUMN kernel_overlap.kernel_id IS 'The GPU event (kernels.kernel_id).';
COMMENT ON COLUMN kernel_overlap.trace_id IS 'Its trace file (traces.trace_id).';
COMMENT ON COLUMN kernel_overlap.run_id IS 'Its run (runs.run_id).';
COMMENT ON COLUMN kernel_overlap.rank IS 'Its rank (kernels.rank).';
COMMENT ON COLUMN kernel_overlap.stage IS 'Its per-kernel stage (kernels.stage): overlap is judged within one (trace, stage, device).';
COMMENT ON COLUMN kernel_overlap.device IS 'Its device (kernels.device); NULL is one more, unnamed device.';
COMMENT ON COLUMN kernel_overlap.stream IS 'Its stream (kernels.stream); NULL is one more, unnamed stream.';
COMMENT ON COLUMN kernel_overlap.name_id IS 'Its name (kernel_names.name_id).';
COMMENT ON COLUMN kernel_overlap.ts_ns IS 'Start, absolute ns (kernels.ts_ns).';
COMMENT ON COLUMN kernel_overlap.dur_ns IS 'Duration, ns (kernels.dur_ns).';
COMMENT ON COLUMN kernel_overlap.hidden_ns IS 'ns of dur_ns during which an event on another stream of the same (trace, stage, device) was running.';
COMMENT ON COLUMN kernel_overlap.hidden_by_compute_ns IS 'ns of hidden_ns during which one of those events was a compute kernel (kernel_names.category = compute).';
COMMENT ON COLUMN kernel_overlap.exclusive_ns IS 'dur_ns - hidden_ns, ns: the time nothing on another stream ran (same-stream overlap stays exclusive).';
COMMENT ON COLUMN kernel_overlap.start_rank IS 'Position of the kernel''s start among the starts swept together (by group, time, kernel_id): consecutive within each (trace, stage, device).';
COMMENT ON COLUMN kernel_overlap.starts_before_end IS 'How many starts precede the kernel''s end in that order: the kernels with start_rank in (start_rank, starts_before_end] start while it runs.';
COMMENT ON COLUMN kernel_overlap.union_share_ns IS 'GPU busy time (union of the group''s intervals) from each of the kernel''s two points to the group''s next point, ns: summed over a group or stage it gives the busy time.';
COMMENT ON COLUMN kernel_overlap.prev_kernel_id IS 'The kernel that starts just before this one on the same stream of the same (trace, stage, device) (ties by kernel_id); NULL for the first.';
COMMENT ON COLUMN kernel_overlap.next_kernel_id IS 'The kernel that starts just after this one on the same stream of the same (trace, stage, device) (ties by kernel_id); NULL for the last.';

-- triage_store
COMMENT ON COLUMN triage_store.run_id IS 'The run (runs.run_id).';
COMMENT ON COLUMN triage_store.rank IS 'The rank the report shows (triage_store_runs.rank).';
COMMENT ON COLUMN triage_store.section IS 'A section of the report: a field of queries.TriageData (Run, Traces, GPUEvents, Kernels, Overlap, Fusions, Idle, ...).';
COMMENT ON COLUMN triage_store.rows IS 'That section''s rows as JSON (an array of objects keyed by the Go fields of the query''s row; an object for Run, null for an empty section).';

-- triage_store_runs
COMMENT ON COLUMN triage_store_runs.run_id IS 'A run with a saved triage report (runs.run_id).';
COMMENT ON COLUMN triage_store_runs.rank IS 'The rank it shows: rank 0, else the run''s lowest rank with GPU events (what triage RUN shows without --rank).';
COMMENT ON COLUMN triage_store_runs.min_share IS 'The --min-share it was made for (percent).';
COMMENT ON COLUMN triage_store_runs.overlap_rows IS 'The --overlap-rows it was made for.';
COMMENT ON COLUMN triage_store_runs.recipe IS 'queries.TriageRecipe of the binary that saved it (its queries, SQL library and row encoding): another binary computes the report instead.';
COMMENT ON COLUMN triage_store_runs.fingerprint IS '_triage_fingerprint of the run when saved: the report is read only while it is current.';
COMMENT ON COLUMN triage_store_runs.stored_at IS 'When the report was saved (local time).';
