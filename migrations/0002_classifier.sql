-- 0002_classifier: the one kernel classifier (triage.md section 3), as data.
--
-- Every table and query that shows a family or category reads
-- kernel_names.family / kernel_names.category, set from the rules below:
-- the rule of the lowest rule_order whose pattern matches the lower-cased
-- name (the demangled form when the raw name is mangled) gives the family;
-- no match gives `other`; the family gives the category. A later migration
-- that changes the rules edits these tables, bumps classifier_versions and
-- ends with the same UPDATE as this file, so existing warehouses are
-- reclassified without re-ingest.
--
-- Patterns are RE2 (DuckDB's regexp_matches: a match anywhere in the name).
-- They are bounded where a bare keyword would hit the wrong kernel; the note
-- of such a rule names the trap. Every pattern requires its `keyword`
-- verbatim, so `contains(name, keyword)` is a cheap exact pre-filter: a name
-- is compiled against only the few patterns whose keyword it contains
-- (DuckDB compiles a pattern per row when it comes from a column).
--
-- (Rewritten once after landing, when every macro and view moved into the
-- SQL library, sqllib/: its macros are in sqllib/classify.sql. A warehouse
-- never runs an applied migration again, and schema.Open creates the
-- library in every warehouse.)

-- Which version of the rules a warehouse holds: one row per migration that
-- changed classifier_rules or family_categories; the current one is the
-- highest version. `tracehouse reclassify` reports it.
CREATE TABLE classifier_versions (
    -- 1, 2, ...: bumped by every migration that changes the rules
    version     INTEGER PRIMARY KEY,
    -- the migration that installed this version, as NNNN_name
    migration   VARCHAR NOT NULL,
    -- what changed, for the reclassify report
    description VARCHAR NOT NULL
);

INSERT INTO classifier_versions VALUES
    (1, '0002_classifier', 'triage.md section 3 ladder, ROCm vocabulary (hipBLASLt/Tensile, composable kernel, AITER, sgl_hip, RCCL), FLA/mamba and TRT-LLM names');

-- The category of each family (triage.md section 3). A family without a row
-- here is categorised `other`.
CREATE TABLE family_categories (
    -- a family of classifier_rules, or `other`
    family   VARCHAR PRIMARY KEY,
    -- compute | communication | memory | elementwise | other
    category VARCHAR NOT NULL
);

INSERT INTO family_categories VALUES
    ('attention',     'compute'),
    ('gemm',          'compute'),
    ('moe',           'compute'),
    ('hybrid_linear', 'compute'),
    ('communication', 'communication'),
    ('memcpy',        'memory'),
    ('memset',        'memory'),
    ('kv_cache',      'memory'),
    ('norm',          'elementwise'),
    ('rope',          'elementwise'),
    ('softmax',       'elementwise'),
    ('activation',    'elementwise'),
    ('quantize',      'elementwise'),
    ('sampling',      'elementwise'),
    ('reduce_topk',   'elementwise'),
    ('elementwise',   'elementwise'),
    ('other',         'other');

-- The ordered rule ladder: first match wins. Families appear in the order of
-- triage.md section 3, numbered in blocks of 100 (communication 1xx, memcpy
-- 2xx, memset 25x, attention 3xx, ... kv_cache 15xx) so a later migration can
-- insert a rule without renumbering. Inside a block come the keywords of the
-- spec in its order, then the extra vocabulary (ROCm, FLA, TRT-LLM, Triton).
CREATE TABLE classifier_rules (
    -- the ladder position: lower wins
    rule_order INTEGER PRIMARY KEY,
    -- the family a name matching this rule gets (see family_categories)
    family     VARCHAR NOT NULL,
    -- a lower-case literal every match of pattern contains: the pre-filter
    keyword    VARCHAR NOT NULL,
    -- RE2, matched on lower(coalesce(demangled, name))
    pattern    VARCHAR NOT NULL,
    -- a kernel name this rule exists for; tests check it gets this family
    example    VARCHAR NOT NULL,
    -- why the rule exists, and which trap its bounds avoid
    note       VARCHAR NOT NULL
);

INSERT INTO classifier_rules VALUES
    -- 1. communication: first, so a fused all-reduce + RMSNorm kernel is communication.
    (101, 'communication', 'nccl', 'nccl', 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)', 'NCCL (and RCCL, which keeps the nccl names) collectives'),
    (102, 'communication', 'rccl', 'rccl', 'rcclGenericKernel', 'RCCL-specific kernels'),
    (103, 'communication', 'allreduce', '(?:^|[^m]|(?:^|[^s])m)allreduce', 'void vllm::oneShotAllReduceKernel<__nv_bfloat16>(float*)', 'custom all-reduces (oneShotAllReduce, cross_device_allreduce, quickreduce::allreduce_...); not "smallreduce"'),
    (104, 'communication', 'all_reduce', '(?:^|[^m]|(?:^|[^s])m)all_reduce', 'void sglang::custom_all_reduce_kernel<float>(float*)', 'not "small_reduce"'),
    (105, 'communication', 'reduce_scatter', 'reduce_scatter', 'ncclDevKernel_reduce_scatter_sum', 'reduce-scatter collectives'),
    (106, 'communication', 'reducescatter', 'reducescatter', 'ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)', 'camel-case ReduceScatter'),
    (107, 'communication', 'allgather', '(?:^|[^m]|(?:^|[^s])m)allgather', 'void tensorrt_llm::kernels::allGatherKernel<__nv_bfloat16>()', 'all-gather; not "smallgather"'),
    (108, 'communication', 'all_gather', '(?:^|[^m]|(?:^|[^s])m)all_gather', 'void pynccl_all_gather_kernel()', 'all-gather; not "small_gather"'),
    (109, 'communication', 'alltoall', '(?:^|[^m]|(?:^|[^s])m)alltoall', 'void tensorrt_llm::kernels::moeAllToAllKernel()', 'all-to-all (MoE expert parallelism)'),
    (110, 'communication', 'all_to_all', '(?:^|[^m]|(?:^|[^s])m)all_to_all', 'void all_to_all_dispatch_kernel()', 'all-to-all'),
    (111, 'communication', 'cross_device_reduce', 'cross_device_reduce', 'void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)', 'vLLM/SGLang/AITER custom all-reduce'),
    (112, 'communication', 'custom_all_reduce', 'custom_all_reduce', 'custom_all_reduce_kernel', 'custom all-reduce (also matched by rule 104)'),
    (113, 'communication', 'deepep', 'deepep', 'deepep_dispatch_kernel', 'DeepEP dispatch/combine'),
    (114, 'communication', 'mooncake', 'mooncake', 'mooncake_transfer_kernel', 'Mooncake transfer engine'),
    (115, 'communication', 'a2a', '(?:^|[^a-z0-9]|moe|ep)a2a(?:[^0-9]|$)', 'void tensorrt_llm::kernels::moe_a2a_dispatch_kernel<__nv_bfloat16>()', 'MoE all-to-all; bounded so hex digits and type names (float2a...) do not hit'),
    (116, 'communication', 'one_shot_all_reduce', 'one_shot_all_reduce', 'one_shot_all_reduce_kernel', 'symmetric-memory one-shot all-reduce'),
    (117, 'communication', 'two_shot_all_reduce', 'two_shot_all_reduce', 'two_shot_all_reduce_kernel', 'symmetric-memory two-shot all-reduce'),
    (118, 'communication', 'allreduce_fusion', 'allreduce_fusion', 'void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_lamport<__nv_bfloat16, 8, true>()', 'all-reduce fused with residual add + RMSNorm (+ quant): communication, not norm'),
    (119, 'communication', 'msccl', 'msccl', 'mscclKernel_Sum_bf16_LL', 'MSCCL / MSCCL++ collectives'),
    (120, 'communication', 'deep_ep', 'deep_ep(?:[^a-z]|$)', 'void deep_ep::intranode::dispatch<8, 768, 8192>(int4*)', 'DeepEP as its namespace is spelt; not deep_epilogue'),
    (121, 'communication', 'userbuffers', 'userbuffers', 'void userbuffers_fp16_sum_inplace_gpu_rr<8>(int)', 'TensorRT-LLM userbuffers all-reduce'),
    (122, 'communication', 'nvshmem', 'nvshmem', 'nvshmemi_transfer_kernel', 'NVSHMEM transfers (DeepEP internode)'),
    (123, 'communication', 'lamport', 'lamport', 'void tensorrt_llm::kernels::lamport_initialize_kernel<float>(float*, int)', 'TensorRT-LLM Lamport all-reduce buffers'),
    -- 2. memcpy, memset (Kineto names them `Memcpy HtoD (Pageable -> Device)`, `Memset (Device)`).
    (201, 'memcpy', 'memcpy', 'memcpy', 'Memcpy HtoD (Pageable -> Device)', 'Kineto memcpy activity, cub BatchMemcpy'),
    (202, 'memcpy', 'dtod', '(?:^|[^a-z])dtod(?:[^a-z]|$)', 'DtoD copy', 'bounded: not addToDevice'),
    (203, 'memcpy', 'htod', '(?:^|[^a-z])htod(?:[^a-z]|$)', 'HtoD copy', 'bounded: not pushToDevice'),
    (204, 'memcpy', 'dtoh', '(?:^|[^a-z])dtoh(?:[^a-z]|$)', 'DtoH copy', 'bounded'),
    (205, 'memcpy', 'copy', '^copy(?:host|device)to(?:host|device)', 'CopyDeviceToHost', 'ROCm (roctracer) copy activity names'),
    (206, 'memcpy', 'amd_rocclr_copy', 'amd_rocclr_copy', '__amd_rocclr_copyBuffer', 'ROCm hipMemcpy done by the runtime''s copy kernels (copyBuffer, copyBufferAligned, copyBufferRect)'),
    (251, 'memset', 'memset', 'memset', 'Memset (Device)', 'Kineto memset activity'),
    (252, 'memset', 'fillbuffer', 'fillbuffer', '__amd_rocclr_fillBufferAligned', 'ROCm hipMemset: the runtime''s fill kernel, roctracer FillBuffer'),
    (253, 'memset', 'amd_rocclr_fill', 'amd_rocclr_fill', '__amd_rocclr_fillImage', 'ROCm runtime fill kernels'),
    -- 3. attention
    (301, 'attention', 'flash_attn', 'flash_attn', 'flash_attn_fwd_kernel', 'flash-attention'),
    (302, 'attention', 'flashattn', 'flashattn', 'void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false, false, true, true, false, false, true, true, false, false>, flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cutlass::bfloat16_t, cutlass::arch::Sm90, 256, true, true, false, false>, flash::VarlenDynamicPersistentTileScheduler<128, 256, 128, false, true, true> > > >(flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false, false, true, true, false, false, true, true, false, false>, flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cutlass::bfloat16_t, cutlass::arch::Sm90, 256, true, true, false, false>, flash::VarlenDynamicPersistentTileScheduler<128, 256, 128, false, true, true> > >::Params)', 'FlashAttention-3 (FlashAttnFwdSm90), wrapped in cutlass::device_kernel: attention before gemm'),
    (303, 'attention', 'flash_fwd', 'flash_fwd', 'void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(flash::Flash_fwd_params)', 'flash-attention 2 forward, split-KV, FlashMLA flash_fwd_splitkv_mla_kernel'),
    (304, 'attention', 'flash::', 'flash::', 'void pytorch_flash::compute_attn_1rowblock<float>()', 'flash-attention namespace (flash::, pytorch_flash::); not flashinfer::'),
    (305, 'attention', 'fmha', 'fmha', 'fmha_v2_flash_attention_bf16_64_128_S_qkv_128_sm90_kernel_nl', 'TensorRT fmha_v2, trtllm-gen fmhaSm100, cutlass::fmha, composable-kernel ck_tile::FmhaFwdKernel, AITER fmha_fwd'),
    (306, 'attention', 'attention', 'attention', 'void vllm::paged_attention_v2_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128, (vllm::Fp8KVCacheDataType)0, false, 512>()', 'any *attention* kernel'),
    (307, 'attention', 'mla', '(?:^|[^a-z0-9_])mla(?:[^a-z_]|$)', 'aiter::mla<128>(float*)', 'mla as a whole token; never smemlayout/gmemlayout (cute layouts), MLARopeQuantize (rope), concat_and_cache_mla / set_mla_kv_buffer (kv_cache)'),
    (308, 'attention', 'mla', '(?:flash|batch|decode|cutlass|trtllm|sparse|fused|triton)_?mla', 'flash_mla_decode_kernel', 'FlashMLA, BatchMLA..., cutlass_mla, trtllm_mla'),
    (309, 'attention', 'mla', 'mla_?(?:decode|dec|prefill|fwd|attn|attention|paged|page|reduce|combine|stage)', 'aiter::mla_dec_stage1_bf16_a16w16_subQ16_mqa16', 'MLA attention steps (AITER mla_dec_stage1, kn_mla_reduce_v1); not mla_kernel of the cache writers'),
    (310, 'attention', 'paged_attention', 'paged_attention', 'void vllm::paged_attention_v1_kernel<float>()', 'paged attention (also rule 306)'),
    (311, 'attention', 'decode_attention', 'decode_attention', '_decode_attention_kernel', 'decode attention (also rule 306)'),
    (312, 'attention', 'batchdecodewithpagedkvcache', 'batchdecodewithpagedkvcache', 'void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::PosEncodingMode)0, 2u, 4u, 8u, 16u, 1u, 8u, flashinfer::DefaultAttention<false, false, false, false>, flashinfer::BatchDecodeParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> >(flashinfer::BatchDecodeParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)', 'FlashInfer decode'),
    (313, 'attention', 'batchprefillwithpagedkvcache', 'batchprefillwithpagedkvcache', 'void flashinfer::BatchPrefillWithPagedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::MaskMode)1, 128u, 2u, 4u, 2u, 4u, 1u, (flashinfer::PosEncodingMode)0, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, int>>(flashinfer::BatchPrefillPagedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)', 'FlashInfer paged prefill'),
    (314, 'attention', 'batchprefillwithraggedkvcache', 'batchprefillwithraggedkvcache', 'void flashinfer::BatchPrefillWithRaggedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::MaskMode)1, 128u, 2u, 4u, 2u, 4u, 1u, (flashinfer::PosEncodingMode)0, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, int>>(flashinfer::BatchPrefillRaggedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)', 'FlashInfer ragged prefill'),
    (315, 'attention', 'kernelmha', 'kernelmha', 'kernelMha', 'TensorRT-LLM XQA (camel case)'),
    (316, 'attention', 'xqa', 'xqa', 'void xqa::kernel_mha<__nv_bfloat16>()', 'TensorRT-LLM XQA'),
    (317, 'attention', '_fwd_kernel_stage', '_fwd_kernel_stage', '_fwd_kernel_stage1', 'SGLang/vLLM Triton decode attention stages'),
    (318, 'attention', 'merge_attn_states', 'merge_attn_states', 'void vllm::merge_attn_states_kernel<__nv_bfloat16, 128u>()', 'split-KV / cascade merge'),
    (319, 'attention', 'merge_state', 'merge_state', 'merge_state_kernel', 'split-KV / cascade merge'),
    (320, 'attention', 'mergestate', 'mergestate', 'void flashinfer::MergeStateKernel<8u, 16u, 8u, 1u, __nv_bfloat16, __nv_bfloat16>(__nv_bfloat16*, float*, __nv_bfloat16*, float*, __nv_bfloat16*, float*, unsigned int, unsigned int)', 'FlashInfer MergeState(s)Kernel, VariableLengthMergeStates'),
    (321, 'attention', 'withkvcache', '(?:prefill|decode|pod)withkvcache', 'void flashinfer::SinglePrefillWithKVCacheKernel<float>()', 'FlashInfer single/POD prefill and decode, Hopper PrefillWithKVCacheKernel'),
    (322, 'attention', 'kernel_mha', 'kernel_mha', 'kernel_mha', 'TensorRT-LLM XQA kernel_mha'),
    (323, 'attention', 'mha', '(?:^|[^a-z])mha(?:[^a-z]|$)', 'mha_fwd_kernel', 'multi-head attention as a token; not inside other words'),
    (324, 'attention', 'mmha', 'mmha', 'void tensorrt_llm::kernels::mmha::masked_multihead_attention_kernel<float>()', 'TensorRT-LLM masked MHA'),
    (325, 'attention', '_fwd_grouped_kernel_stage', '_fwd_grouped_kernel_stage', '_fwd_grouped_kernel_stage1', 'SGLang/vLLM Triton grouped (GQA/MLA) decode attention'),
    (326, 'attention', '_fwd_kernel', '^_fwd_kernel(?:$|_alibi|_flash_decode)', '_fwd_kernel', 'Triton prefill/extend attention (SGLang extend_attention, vLLM prefix_prefill, lightllm flash decode); not SGLang''s MoE _fwd_kernel_ep_scatter_1'),
    (327, 'attention', 'attn_fwd', '(?:^|[^a-z])attn_fwd', '_attn_fwd', 'AMD Triton flash attention (attn_fwd, _attn_fwd_inner)'),
    (328, 'attention', 'sdpa', 'sdpa', 'cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0', 'cuDNN fused SDPA: attention before gemm (wgmma)'),
    -- 4. hybrid_linear: linear attention / state-space layers (Mamba, GDN).
    (401, 'hybrid_linear', 'gdn', 'gdn', 'fused_gdn_gating_kernel', 'gated delta net'),
    (402, 'hybrid_linear', 'gated_delta', 'gated_delta', 'chunk_gated_delta_rule_fwd_kernel_h_blockdim64', 'FLA gated delta rule'),
    (403, 'hybrid_linear', 'mamba', 'mamba', 'mamba_chunk_scan_combined_kernel', 'Mamba'),
    (404, 'hybrid_linear', 'selective_scan', 'selective_scan', 'void selective_scan_fwd_kernel<Selective_Scan_fwd_kernel_traits<32, 4, true, true, true, true, true, c10::BFloat16, float, float> >(SSMParamsBase)', 'Mamba-1 selective scan'),
    (405, 'hybrid_linear', 'causal_conv', 'causal_conv', 'causal_conv1d_update_kernel', 'causal conv1d (Mamba, GDN)'),
    (406, 'hybrid_linear', 'ssd_', '(?:^|[^a-z])ssd_', 'ssd_chunk_scan_kernel', 'Mamba-2 SSD; bounded'),
    (408, 'hybrid_linear', 'chunk_scan_fwd', 'chunk_scan_fwd', '_chunk_scan_fwd_kernel', 'Mamba-2 SSD Triton kernels'),
    (409, 'hybrid_linear', 'chunk_state_fwd', 'chunk_state_fwd', '_chunk_state_fwd_kernel', 'Mamba-2 SSD Triton kernels'),
    (410, 'hybrid_linear', 'state_passing_fwd', 'state_passing_fwd', '_state_passing_fwd_kernel', 'Mamba-2 SSD Triton kernels'),
    (411, 'hybrid_linear', 'bmm_chunk_fwd', 'bmm_chunk_fwd', '_bmm_chunk_fwd_kernel', 'Mamba-2 SSD Triton kernel: hybrid before gemm (bmm)'),
    (412, 'hybrid_linear', 'chunk_cumsum_fwd', 'chunk_cumsum_fwd', '_chunk_cumsum_fwd_kernel', 'Mamba-2 SSD Triton kernels'),
    (413, 'hybrid_linear', 'delta_rule', 'delta_rule', 'fused_sigmoid_gating_delta_rule_update_kernel', 'FLA delta-rule kernels: hybrid before activation (sigmoid)'),
    (414, 'hybrid_linear', 'fused_recurrent', 'fused_recurrent', 'fused_recurrent_fwd_kernel', 'FLA recurrent linear attention'),
    (415, 'hybrid_linear', 'chunk_scaled_dot_kkt', 'chunk_scaled_dot_kkt', 'chunk_scaled_dot_kkt_fwd_kernel', 'FLA chunked GDN'),
    (416, 'hybrid_linear', 'solve_tril', 'solve_tril', 'solve_tril_16x16_kernel', 'FLA chunked GDN'),
    (417, 'hybrid_linear', 'recompute_w_u', 'recompute_w_u', 'recompute_w_u_fwd_kernel', 'FLA chunked GDN'),
    (418, 'hybrid_linear', 'chunk_fwd_kernel_o', 'chunk_fwd_kernel_o(?:[^a-z]|$)', 'chunk_fwd_kernel_o', 'FLA chunked output'),
    (419, 'hybrid_linear', 'chunk_local_cumsum', 'chunk_local_cumsum', 'chunk_local_cumsum_scalar_kernel', 'FLA chunked GDN'),
    (420, 'hybrid_linear', 'merge_16x16_to_64x64_inverse', 'merge_16x16_to_64x64_inverse', 'merge_16x16_to_64x64_inverse_kernel', 'FLA chunked GDN'),
    -- 5. moe: before gemm, so fused_moe and grouped GEMMs are moe.
    (501, 'moe', 'fused_moe', 'fused_moe', 'fused_moe_kernel', 'Triton fused MoE'),
    (502, 'moe', 'moe', 'moe', 'void moe::dev::routing::routingDeepSeek::routingMainKernel<moe::dev::routing::routingDeepSeek::KernelParams<__nv_bfloat16, float, float, false> >(moe::dev::routing::routingDeepSeek::KernelParams<__nv_bfloat16, float, float, false>)', 'any MoE kernel: routing, align, sum, AITER fmoe, ck moe_sorting'),
    (503, 'moe', 'expert', 'expert', 'void count_and_sort_expert_tokens_kernel<int>(int const*, int*, int*, unsigned long)', 'expert bookkeeping'),
    (504, 'moe', 'grouped_mm', 'grouped_mm', 'void at::cuda::detail::_grouped_mm_kernel<float>()', 'torch _grouped_mm'),
    (505, 'moe', 'groupgemm', 'groupgemm', 'groupgemm_kernel', 'grouped GEMM'),
    (506, 'moe', 'group_gemm', 'group_gemm', 'cutlass_group_gemm_kernel', 'grouped GEMM'),
    (507, 'moe', 'topkgating', 'topkgating', 'void vllm::moe::topkGatingSoftmax<8, 8, 4, 16, int>(float const*, bool const*, float*, int, int*, int*, int, int, int)', 'MoE routing: moe before softmax and topk'),
    (508, 'moe', 'grouped_gemm', 'grouped_gemm', 'void deep_gemm::fp8_m_grouped_gemm_kernel<128u>()', 'grouped GEMM (DeepGEMM m-grouped, cutlass grouped_gemm)'),
    (509, 'moe', 'groupedgemm', 'groupedgemm', 'void cutlass::Kernel<GroupedGemmKernel<float>>()', 'grouped GEMM (camel case)'),
    (510, 'moe', 'expandinputrows', 'expandinputrows', 'void tensorrt_llm::kernels::cutlass_kernels::expandInputRowsKernel<__nv_bfloat16>()', 'TensorRT-LLM MoE permute: moe before gemm (cutlass namespace)'),
    (511, 'moe', 'ep_scatter', '(?:^|_)ep_scatter', '_fwd_kernel_ep_scatter_1', 'SGLang expert-parallel MoE permute: moe before elementwise (scatter)'),
    (512, 'moe', 'ep_gather', '(?:^|_)ep_gather', '_fwd_kernel_ep_gather', 'SGLang expert-parallel MoE un-permute: moe before elementwise (gather)'),
    -- 6. gemm
    (601, 'gemm', 'gemm', 'gemm(?:[^a]|$)', 'cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8', 'any *gemm*; not gemma (the model: gemma_fused_add_rmsnorm, GemmaRMSNorm are norm)'),
    (602, 'gemm', 'gemv', 'gemv', 'void gemv2T_kernel_val<int, int, __nv_bfloat16, __nv_bfloat16, float, 128, 16, 4, 4, false, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float> >(cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>, float, float)', 'matrix-vector'),
    (603, 'gemm', 'matmul', 'matmul', 'matmul_kernel_persistent', 'Triton matmul'),
    (604, 'gemm', 'cublas', 'cublas', 'void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, true, false, false>(cublasLt::cublasSplitKParams<float>, float const*, __nv_bfloat16 const*, __nv_bfloat16*, float const*, float const*, __nv_bfloat16 const*, float const*, __nv_bfloat16*, void*, long, float*, int*)', 'cuBLAS / cuBLASLt, including its split-K reduction'),
    (605, 'gemm', 'cutlass', 'cutlass', 'void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8::Params)', 'CUTLASS GEMMs (attention, moe and communication kernels built on CUTLASS are matched earlier)'),
    (606, 'gemm', 'wgmma', 'wgmma', 'wgmma_kernel', 'Hopper warpgroup MMA'),
    (607, 'gemm', 'nvjet', 'nvjet', 'nvjet_tst_192x192_64x3_2x1_v_bz_coopB_TNT', 'cuBLAS nvjet GEMMs'),
    (608, 'gemm', 'bmm', 'bmm', 'bmm_fp8_kernel', 'batched matmul'),
    (609, 'gemm', 'xmma', 'xmma', 'sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas', 'cuBLAS xmma GEMMs'),
    (610, 'gemm', 'sm90_', '(?:^|[^a-z0-9])sm90_', 'void cutlass::device_kernel<cutlass3x_sm90_tensorop_s64x128x16gemm_bf16_bf16_f32_bf16_bf16_128x128x64_1x1x1_0_tnn_align8_warpspecialized_cooperative_epi_tma>()', 'Hopper GEMM kernel names (sm90_...)'),
    (611, 'gemm', 'sm100_', '(?:^|[^a-z0-9])sm100_', 'sm100_xmma_gemm_bf16bf16_bf16f32_f32_tn_n', 'Blackwell GEMM kernel names (sm100_...)'),
    (612, 'gemm', 'ampere_', '(?:^|[^a-z0-9])ampere_', 'ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_nn', 'cuBLAS Ampere GEMMs'),
    (613, 'gemm', 'mma', '(?:^|[^a-z]|[bhiwx]|wg)mma', 'void fused_mixed_dtype_wmma_kernel<float>()', 'MMA, HMMA, IMMA, WMMA, XMMA, WGMMA, BMMA; not gemma, comma, dilemma, collectivemma'),
    (614, 'gemm', 'marlin', 'marlin', 'void marlin::Marlin<__nv_bfloat16, 4, 256, 1, 8, 8, false, 8>()', 'Marlin mixed-precision GEMM'),
    (615, 'gemm', 'deep_gemm', 'deep_gemm', 'void deep_gemm::sm90_fp8_gemm_1d2d_impl<0u, 4096u>()', 'DeepGEMM (m-grouped DeepGEMM is moe)'),
    (616, 'gemm', 'fp8_gemm', 'fp8_gemm', 'fp8_gemm_kernel', 'fp8 GEMM (also rule 601)'),
    (617, 'gemm', 'cijk_', 'cijk_', 'Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI16x16x16x1_SN_1LDSB0_GRVW8_GSU1_ISA942_K1_LBSPP128_LPA0_LPB8_LRVW16_MIAV1_MMFGLC_NLCA1_NLCB1_PGR2_PLR1_SIA3_SS1_SU32_SUM0_SUS128_SVW4_TT4_64_TLDS1_USFGROn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG32_8_1', 'ROCm hipBLASLt / Tensile GEMMs'),
    (618, 'gemm', 'hipblaslt', 'hipblaslt', 'hipblaslt_kernel', 'ROCm hipBLASLt'),
    (619, 'gemm', 'splitk', 'wv_?splitk', 'void wvSplitK_hf_sml_<__hip_bfloat16, 64, 2, 16, 8, 2, 1>(int, int, int, int, int, __hip_bfloat16 const*, __hip_bfloat16 const*, __hip_bfloat16 const*, __hip_bfloat16*, int, int)', 'ROCm skinny GEMMs (vLLM/AITER wvSplitK)'),
    (620, 'gemm', 'splitkreduce', 'splitkreduce', 'splitKreduce_kernel', 'cuBLASLt split-K reduction of a GEMM'),
    (621, 'gemm', 'mfma', 'mfma', 'ck_mfma_kernel', 'ROCm matrix-core (MFMA) kernels; attention/moe ones are matched earlier'),
    (622, 'gemm', 'scaled_mm', 'scaled_mm', 'void vllm::scaled_mm_kernel<float>()', 'scaled (fp8/int8) GEMMs'),
    (623, 'gemm', 'gmv', '(?:^|[^a-z])[bs]gmv', '_bgmv_expand_kernel', 'LoRA punica sgmv/bgmv'),
    (624, 'gemm', 'lora_', 'lora_(?:shrink|expand)', '_lora_shrink_kernel', 'LoRA shrink/expand GEMMs'),
    (625, 'gemm', 'triton_tem_fused_', '^triton_tem_fused_[a-z0-9_]*mm', 'triton_tem_fused_addmm_0', 'Inductor GEMM templates (mm, addmm, bmm); other templates (flex attention) stay other'),
    -- 7. norm
    (701, 'norm', 'rmsnorm', 'rmsnorm', 'void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, unsigned int, float, float)', 'RMSNorm, fused add + RMSNorm (+ quant: AITER add_rmsnorm_quant_kernel)'),
    (702, 'norm', 'layernorm', 'layernorm', 'void cuApplyLayerNorm<float>()', 'LayerNorm'),
    (703, 'norm', 'layer_norm', 'layer_norm', 'void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)', 'LayerNorm: norm before elementwise (vectorized_)'),
    (704, 'norm', 'rms_norm', 'rms_norm', 'void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, float, int, int)', 'vLLM rms_norm_kernel, fused_add_rms_norm_kernel'),
    (705, 'norm', 'normkernel', 'normkernel', 'void flashinfer::norm::GemmaRMSNormKernel<8u, __nv_bfloat16>()', 'camel-case *NormKernel'),
    (706, 'norm', '_norm_', '_norm_', 'l2_norm_kernel', 'snake-case *_norm_*'),
    (707, 'norm', 'qknorm', 'qknorm', 'fused_qknorm_rope_kernel', 'QK norm (fused with RoPE: norm comes first)'),
    (708, 'norm', 'l2norm', 'l2norm', 'l2norm_fwd_kernel', 'FLA L2 norm'),
    (709, 'norm', 'groupnorm', 'groupnorm', 'groupnorm_kernel', 'GroupNorm'),
    (710, 'norm', 'rsqrt', 'triton_(?:red|per)_fused_[a-z0-9_]*rsqrt', 'triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0', 'Inductor-fused RMSNorm (mean, pow, rsqrt): norm before elementwise (copy)'),
    (711, 'norm', 'rowwisemoments', 'rowwisemoments', 'void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long, float, float const*, float*, float*)', 'torch LayerNorm/GroupNorm statistics'),
    -- 8. rope
    (801, 'rope', 'rotary', 'rotary', 'void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)', 'rotary embedding (no attention keyword in it)'),
    (802, 'rope', 'rope', '(?:^|[^p])rope', 'void flashinfer::MLARopeQuantizeKernel<float>()', 'RoPE; not "property"'),
    -- 9. softmax
    (901, 'softmax', 'softmax', 'softmax', 'void (anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, (anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)', 'softmax'),
    -- 10. activation
    (1001, 'activation', 'silu', 'silu', 'silu_and_mul_kernel', 'SiLU'),
    (1002, 'activation', 'gelu', 'gelu', 'gelu_tanh_and_mul_kernel', 'GELU'),
    (1003, 'activation', 'relu', 'relu', 'relu_kernel', 'ReLU (a GEMM with a relu epilogue is gemm: rule 601 first)'),
    (1004, 'activation', 'act_and_mul', 'act_and_mul', 'void vllm::act_and_mul_kernel<c10::BFloat16, &(float vllm::silu_kernel<float>(float const&)), true>(c10::BFloat16*, c10::BFloat16 const*, int)', 'gated activations'),
    (1005, 'activation', 'swiglu', 'swiglu', 'swiglu_kernel', 'SwiGLU'),
    (1006, 'activation', 'sigmoid', 'sigmoid', 'void at::native::vectorized_elementwise_kernel<4, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)', 'sigmoid: activation before elementwise'),
    (1007, 'activation', 'doactivation', 'doactivation', 'void tensorrt_llm::kernels::doActivationKernel<float>()', 'TensorRT-LLM MoE activation'),
    -- 11. quantize
    (1101, 'quantize', 'quant', 'quant', '_per_token_group_quant_fp8', 'quantize / dequantize'),
    (1102, 'quantize', 'fp8', 'fp8(?:[^a-z]|e[45]m|$)', 'convert_fp8_kernel', 'fp8 conversions; not the Fp8KVCacheDataType template argument of cache writers'),
    (1103, 'quantize', 'mxfp', 'mxfp', 'mxfp8_cast_kernel', 'MX formats'),
    (1104, 'quantize', 'nvfp4', 'nvfp4', 'nvfp4_cast_kernel', 'NVFP4'),
    (1105, 'quantize', 'dequant', 'dequant', 'dequant_kernel', 'dequantize (also rule 1101)'),
    (1106, 'quantize', 'cvt_', 'cvt_', 'void tensorrt_llm::kernels::cvt_fp16_to_fp4<__nv_bfloat16, false>()', 'format conversions'),
    -- 12. sampling
    (1201, 'sampling', 'sampling', 'sampling', 'void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u, (cub::BlockScanAlgorithm)0, (cub::BlockReduceAlgorithm)2, 4u, false, float, int>()', 'FlashInfer sampling: sampling before reduce_topk (topk, BlockReduce)'),
    (1202, 'sampling', 'multinomial', 'multinomial', 'void at::native::(anonymous namespace)::sampleMultinomialOnce<float, float>()', 'torch multinomial'),
    (1203, 'sampling', 'top_p', '(?:^|[^a-z])top_p(?:[^a-z]|$)', 'top_p_renorm_prob_kernel', 'top-p; not "stop_p"'),
    (1204, 'sampling', 'top_k_renorm', 'top_k_renorm', 'top_k_renorm_prob_kernel', 'top-k renormalisation'),
    (1205, 'sampling', 'argmax', 'argmax', 'void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4> >(at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4>)', 'greedy sampling: argmax before reduce'),
    (1206, 'sampling', 'topkrenorm', 'topkrenorm', 'void flashinfer::sampling::TopKRenormProbKernel<1024u>()', 'FlashInfer camel case'),
    (1207, 'sampling', 'topprenorm', 'topprenorm', 'TopPRenormProbKernel', 'FlashInfer camel case'),
    (1208, 'sampling', 'min_p', '(?:^|[^a-z])min_p(?:[^a-z]|$)', 'min_p_sampling_kernel', 'min-p'),
    (1209, 'sampling', 'masklogits', 'masklogits', 'void flashinfer::sampling::TopKMaskLogitsKernel<1024u>()', 'FlashInfer logits masking: sampling before topk'),
    (1210, 'sampling', 'topkstage', 'topkstage', 'void tensorrt_llm::kernels::topKStage1<float, 128, 8>(float const*, float*, int*, float*, tensorrt_llm::kernels::FinishedState const*, int, int const*, int, int, int const*, int, bool const*)', 'TensorRT-LLM top-k sampling stages: sampling before topk'),
    -- 13. reduce_topk
    (1301, 'reduce_topk', 'topk', 'topk', 'void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>()', 'top-k: before elementwise (gather)'),
    (1302, 'reduce_topk', 'reduce', 'reduce(?:[^a-z]|kernel|op|singletile|$)', 'void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)', 'reductions (torch reduce_kernel, cub DeviceReduceKernel); not the ReduceAdd functor of scatter_add'),
    (1303, 'reduce_topk', 'argtopk', 'argtopk', 'argtopk_kernel', 'arg-top-k (also rule 1301)'),
    (1304, 'reduce_topk', 'triton_', '^triton_(?:red|per)_fused', 'triton_per_fused_sum_0', 'Inductor reductions'),
    -- 14. elementwise
    (1401, 'elementwise', 'elementwise', 'elementwise', 'void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int)#1})', 'torch elementwise kernels'),
    (1402, 'elementwise', 'vectorized_', 'vectorized_', 'vectorized_copy_kernel', 'torch vectorized_* kernels'),
    (1403, 'elementwise', 'unrolled_', 'unrolled_', 'unrolled_kernel', 'torch unrolled_* kernels'),
    (1404, 'elementwise', 'gpu_kernel_impl', 'gpu_kernel_impl', 'gpu_kernel_impl_nocast', 'torch TensorIterator'),
    (1405, 'elementwise', 'binary_internal', 'binary_internal', 'at::native::binary_internal::MulFunctor', 'torch binary ops'),
    (1406, 'elementwise', 'unaryfunctor', 'unaryfunctor', 'at::native::AUnaryFunctor', 'torch unary ops'),
    (1407, 'elementwise', 'copy', 'copy', 'void at::native::(anonymous namespace)::CatArrayBatchedCopy_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 2, 128, 1>()', 'copies, direct_copy_kernel_cuda'),
    (1408, 'elementwise', 'fill', '(?:^|[^a-z])fill', 'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)', 'fill; not "prefill"'),
    (1409, 'elementwise', 'cat', '(?:^|[^a-z])cat(?:[^a-z]|arr)', 'triton_poi_fused_cat_0', 'cat, CatArray...; not concat (concat_and_cache is kv_cache), location, allocate'),
    (1410, 'elementwise', 'index', 'index', 'void at::native::index_elementwise_kernel<128, 4, float>()', 'indexing, index_select'),
    (1411, 'elementwise', 'gather', 'gather', 'void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)', 'gather (all_gather is communication)'),
    (1412, 'elementwise', 'scatter', 'scatter', 'void at::native::_scatter_gather_elementwise_kernel<128, 8, float>()', 'scatter (reduce_scatter is communication)'),
    (1413, 'elementwise', 'triton_poi_', '^triton_poi_', 'triton_poi_fused_add_mul_0', 'Inductor pointwise fusions'),
    -- 15. kv_cache
    (1501, 'kv_cache', 'reshape_and_cache', 'reshape_and_cache', 'void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, __nv_bfloat16*, long const*, int, int, int, int, int, int, float const*, float const*)', 'vLLM cache writes'),
    (1502, 'kv_cache', 'store_kvcache', 'store_kvcache', 'store_kvcache', 'SGLang cache writes'),
    (1503, 'kv_cache', 'set_kv_buffer', 'set_kv_buffer', 'set_kv_buffer_kernel', 'SGLang cache writes'),
    (1504, 'kv_cache', 'kv_cache', 'kv_cache', 'update_kv_cache_kernel', 'KV-cache kernels'),
    (1505, 'kv_cache', 'cache_kernel', 'cache_kernel', 'void vllm::reshape_and_cache_kernel<float>()', 'cache kernels'),
    (1506, 'kv_cache', 'concat_and_cache', 'concat_and_cache', 'void vllm::concat_and_cache_mla_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, long const*, int, int, int, int, int, int, float const*)', 'vLLM MLA cache write'),
    (1507, 'kv_cache', 'set_mla_kv_buffer', 'set_mla_kv_buffer', 'set_mla_kv_buffer_kernel', 'SGLang MLA cache write'),
    (1508, 'kv_cache', 'appendpagedkvcache', 'appendpagedkvcache', 'void flashinfer::AppendPagedKVCacheKernel<128u, 8u, __nv_bfloat16, int>()', 'FlashInfer cache append');

-- Classify every name already in the warehouse (what schema/classify.sql
-- does with $all = true, written out: the classifier macros are the SQL
-- library's, which migrations do not call).
UPDATE kernel_names AS k
SET family = c.family,
    category = coalesce((SELECT fc.category FROM family_categories fc WHERE fc.family = c.family), 'other')
FROM (
    SELECT kn.name_id,
           coalesce((SELECT arg_min(r.family, r.rule_order)
                     FROM classifier_rules r
                     WHERE contains(lower(coalesce(kn.demangled, kn.name)), r.keyword)
                       AND regexp_matches(lower(coalesce(kn.demangled, kn.name)), r.pattern)), 'other') AS family
    FROM kernel_names kn
) AS c
WHERE k.name_id = c.name_id;
