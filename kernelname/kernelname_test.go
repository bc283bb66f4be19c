package kernelname

import (
	"regexp"
	"strings"
	"testing"
)

// realNames are short names (kernel_names.short_name) of real kernels:
// every kernel of the demo traces (SGLang, vLLM, TensorRT-LLM, TokenSpeed
// on H100/B200), then cuBLAS, CUTLASS, FlashAttention 2/3, FlashMLA,
// FlashInfer, DeepGEMM, NCCL, Triton and ROCm (hipBLASLt/Tensile, composable
// kernel, AITER) names, with the display name each must get.
var realNames = []struct{ short, display string }{
	{"Memcpy DtoH (Device -> Pinned)", "Memcpy DtoH (Device -> Pinned)"},
	{"Memcpy HtoD (Pageable -> Device)", "Memcpy HtoD (Pageable -> Device)"},
	{"Memcpy HtoD (Pinned -> Device)", "Memcpy HtoD (Pinned -> Device)"},
	{"Memset (Device)", "Memset (Device)"},
	{"_fwd_kernel_stage1", "_fwd_kernel_stage1"},
	{"_fwd_kernel_stage2", "_fwd_kernel_stage2"},
	{"_per_token_group_quant_fp8", "_per_token_group_quant_fp8"},
	{"fmha_v2_flash_attention_bf16_64_128_S_qkv_128_causal_sm90_kernel_nl_tiled", "fmha_bf16_64_128_qkv_128_causal"},
	{"fused_moe_kernel", "fused_moe_kernel"},
	{"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_AllGather_RING_LL"},
	{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"},
	{"nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT", "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT"},
	{"nvjet_tst_128x64_64x8_2x1_v_bz_TNT", "nvjet_tst_128x64_64x8_2x1_v_bz_TNT"},
	{"nvjet_tst_128x8_64x12_2x1_v_bz_splitK_TNT", "nvjet_tst_128x8_64x12_2x1_v_bz_splitK_TNT"},
	{"nvjet_tst_192x8_64x10_4x1_v_bz_TNN", "nvjet_tst_192x8_64x10_4x1_v_bz_TNN"},
	{"nvjet_tst_256x8_64x6_2x1_v_bz_TNT", "nvjet_tst_256x8_64x6_2x1_v_bz_TNT"},
	{"nvjet_tst_64x32_64x16_2x1_v_bz_bias_TNN", "nvjet_tst_64x32_64x16_2x1_v_bz_bias_TNN"},
	{"nvjet_tst_64x64_64x8_2x1_v_bz_TNT", "nvjet_tst_64x64_64x8_2x1_v_bz_TNT"},
	{"nvjet_tst_64x8_64x16_4x1_v_bz_TNN", "nvjet_tst_64x8_64x16_4x1_v_bz_TNN"},
	{"nvjet_tst_64x8_64x16_4x1_v_bz_TNT", "nvjet_tst_64x8_64x16_4x1_v_bz_TNT"},
	{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", "xmma_bf16_tn_128x128x64"},
	{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", "xmma_bf16_tn_256x128x64"},
	{"void (anonymous namespace)::set_mla_kv_buffer_kernel<64>", "set_mla_kv_buffer_kernel<…>"},
	{"void (anonymous namespace)::store_kvcache<8, 128, c10::BFloat16>", "store_kvcache<…>"},
	{"void aiter::add_rmsnorm_quant_kernel<c10::BFloat16, 256, 8>", "add_rmsnorm_quant_kernel<…>"},
	{"void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>", "cunn_SoftMaxForward<…>"},
	{"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>", "indexSelectLargeIndex<…>"},
	{"void at::native::(anonymous namespace)::tensor_kernel_scan_innermost_dim<int, std::plus<int> >", "tensor_kernel_scan_innermost_dim<…>"},
	{"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4> >", "reduce_kernel<…>"},
	{"void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>", "gatherTopK<…>"},
	{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >", "vectorized_elementwise_kernel<…>"},
	{"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >", "vectorized_elementwise_kernel<…>"},
	{"void count_and_sort_expert_tokens_kernel<int>", "count_and_sort_expert_tokens_kernel<…>"},
	{"void cross_device_reduce_1stage<__nv_bfloat16, 2>", "cross_device_reduce_1stage<…>"},
	{"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>", "cutlass_bf16_relu_64x64_64x4_tn"},
	{"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedCooperative<4, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1> >, cutlass::gemm::KernelTmaWarpSpecializedCooperative>, cute::tuple<cute::C<128>, cute::C<256>, cute::C<64> >, cutlass::bfloat16_t>, cutlass::epilogue::collective::DefaultEpilogue<cutlass::bfloat16_t>, void> >", "GemmUniversal<…>"},
	{"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false, false, true, true, false, false, true, true, true, false, false>, flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cutlass::bfloat16_t, cutlass::arch::Sm90, 256, true, true, false, false>, flash::VarlenDynamicPersistentTileScheduler<128, 128, 256, 128, false, true, true, true, true, true> > > >", "FlashAttnFwdSm90<…>"},
	{"void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0, 0u, 2112u, 7168u, 128u, 112u, 128u, 1u, 4u, 2u, 32u, 128u, 128u, 148u, 1u, false, (deep_gemm::GemmType)0, false, cutlass::bfloat16_t>", "sm100_fp8_gemm_1d1d_impl<…>"},
	{"void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0, 0u, 24576u, 1536u, 128u, 192u, 128u, 1u, 4u, 2u, 32u, 128u, 128u, 148u, 1u, false, (deep_gemm::GemmType)0, false, cutlass::bfloat16_t>", "sm100_fp8_gemm_1d1d_impl<…>"},
	{"void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0, 0u, 36864u, 7168u, 128u, 224u, 128u, 1u, 4u, 2u, 32u, 128u, 128u, 148u, 1u, false, (deep_gemm::GemmType)0, false, cutlass::bfloat16_t>", "sm100_fp8_gemm_1d1d_impl<…>"},
	{"void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0, 0u, 7168u, 16384u, 128u, 112u, 128u, 1u, 4u, 2u, 32u, 128u, 128u, 148u, 1u, false, (deep_gemm::GemmType)0, false, cutlass::bfloat16_t>", "sm100_fp8_gemm_1d1d_impl<…>"},
	{"void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0, 0u, 7168u, 18432u, 128u, 112u, 128u, 1u, 4u, 2u, 32u, 128u, 128u, 148u, 1u, false, (deep_gemm::GemmType)0, false, cutlass::bfloat16_t>", "sm100_fp8_gemm_1d1d_impl<…>"},
	{"void flash::prepare_varlen_num_blocks_kernel<1, true>", "prepare_varlen_num_blocks_kernel<…>"},
	{"void flashinfer::BatchDecodeWithPagedKVCacheKernel<flashinfer::DefaultAttention<false, false, false, false>, (flashinfer::PosEncodingMode)0, 2u, 4u, 8u, 16u, 1u, 8u, flashinfer::BatchDecodeParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> >", "BatchDecodeWithPagedKVCacheKernel<…>"},
	{"void flashinfer::BatchPrefillWithRaggedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::MaskMode)1, 128u, 1u, 4u, 8u, 8u, 1u, 4u, (flashinfer::PosEncodingMode)0, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, int, flashinfer::DefaultAttention<false, false, false, false> >, flashinfer::RaggedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> >", "BatchPrefillWithRaggedKVCacheKernel<…>"},
	{"void flashinfer::BatchPrefillWithRaggedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::MaskMode)1, 128u, 1u, 4u, 8u, 8u, 1u, 4u, (flashinfer::PosEncodingMode)0, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, long, flashinfer::DefaultAttention<false, false, false, false> >, flashinfer::RaggedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, long> >", "BatchPrefillWithRaggedKVCacheKernel<…>"},
	{"void flashinfer::BatchQKApplyRotaryPosIdsCosSinCache<true, 64u, 8u, 16u, __nv_bfloat16, long>", "BatchQKApplyRotaryPosIdsCosSinCache<…>"},
	{"void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &silu<float> >", "act_and_mul_kernel<…>"},
	{"void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>", "FusedAddRMSNormKernel<…>"},
	{"void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>", "RMSNormKernel<…>"},
	{"void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u, (cub::CUB_200700_900_NS::BlockScanAlgorithm)0, (cub::CUB_200700_900_NS::BlockReduceAlgorithm)2, 4u, false, float, int>", "TopKTopPSamplingFromProbKernel<…>"},
	{"void moe_align_block_size_kernel<int>", "moe_align_block_size_kernel<…>"},
	{"void moe_fused_gate_kernel<float, 256, 8, 4, 8>", "moe_fused_gate_kernel<…>"},
	{"void moe_sum_reduce_kernel<c10::BFloat16, 8>", "moe_sum_reduce_kernel<…>"},
	{"void tensorrt_llm::kernels::applyBiasRopeUpdateKVCacheV2<__nv_bfloat16, __nv_bfloat16, 128, false, tensorrt_llm::kernels::KVBlockArray, false, false>", "applyBiasRopeUpdateKVCacheV2<…>"},
	{"void tensorrt_llm::kernels::topKStage1<float, 128, 8>", "topKStage1<…>"},
	{"void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>", "act_and_mul_kernel<…>"},
	{"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>", "cross_device_reduce_1stage<…>"},
	{"void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>", "fused_add_rms_norm_kernel<…>"},
	{"void vllm::moe::moe_align_block_size_kernel<int>", "moe_align_block_size_kernel<…>"},
	{"void vllm::moe::moe_sum_kernel<c10::BFloat16, 8>", "moe_sum_kernel<…>"},
	{"void vllm::moe::topkGatingSoftmax<4, 128, 4, 16, 32, int, float>", "topkGatingSoftmax<…>"},
	{"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>", "reshape_and_cache_flash_kernel<…>"},
	{"void vllm::rms_norm_kernel<c10::BFloat16>", "rms_norm_kernel<…>"},
	{"void vllm::rotary_embedding_kernel<c10::BFloat16, true>", "rotary_embedding_kernel<…>"},
	{"xqa_kernel_dt_bf16_d_128_beam_1_kvt_bf16_pagedKV_32_nqpkv_8_m_8_sm_90", "xqa_kernel_dt_bf16_d_128_beam_1_kvt_bf16_pagedKV_32_nqpkv_8_m_8_sm_90"},
	{"void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, true, false, false>", "splitKreduce_kernel<…>"},
	{"void gemv2T_kernel_val<int, int, __nv_bfloat16, __nv_bfloat16, float, 128, 16, 4, 4, false, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float> >", "gemv2T_kernel_val<…>"},
	{"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_nn", "ampere_bf16_128x128_32x5_nn"},
	{"Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI16x16x16x1_SN_1LDSB0_GRVW8_GSU1_ISA942_K1_LBSPP128_LPA0_LPB8_LRVW16_MIAV1_MMFGLC_NLCA1_NLCB1_PGR2_PLR1_SIA3_SS1_SU32_SUM0_SUS128_SVW4_TT4_64_TLDS1_USFGROn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG32_8_1", "Cijk_Ailk_Bljk_BBS_MT128x128x64"},
	{"void wvSplitK_hf_sml_<__hip_bfloat16, 64, 2, 16, 8, 2, 1>", "wvSplitK_hf_sml_<…>"},
	{"void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<ck::tensor_layout::gemm::RowMajor, ck::tensor_layout::gemm::ColumnMajor, ck::tensor_layout::gemm::RowMajor, ck::half_t, ck::half_t, float, ck::half_t> >", "kernel_gemm_xdl_cshuffle_v3<…>"},
	{"void ck_tile::kentry<1, ck_tile::FmhaFwdKernel<int>, ck_tile::FmhaFwdKernel::Kargs>", "FmhaFwdKernel<…>"},
	{"void aiter::mla<128>", "mla<…>"},
	{"aiter::mla_dec_stage1_bf16_a16w16_subQ16_mqa16", "mla_dec_stage1_bf16_a16w16_subQ16_mqa16"},
	{"void aiter::paged_attention_ll4mi_QKV_mfma16_kernel<std::bfloat16_t, std::bfloat16_t, 16, 128, 256, true, 1>", "paged_attention_ll4mi_QKV_mfma16_kernel<…>"},
	{"triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0"},
	{"triton_poi_fused_mul_silu_0", "triton_poi_fused_mul_silu_0"},
	{"void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>", "flash_fwd_splitkv_kernel<…>"},
	{"void flash_fwd_splitkv_mla_kernel<Flash_fwd_kernel_traits_mla<576, 64, 64, 8, cutlass::bfloat16_t, 512>, true, SharedStorageMLA<Flash_fwd_kernel_traits_mla<576, 64, 64, 8, cutlass::bfloat16_t, 512> > >", "flash_fwd_splitkv_mla_kernel<…>"},
	{"void flashinfer::mla::BatchMLAPagedAttentionKernel<(flashinfer::MaskMode)0, 512u, 64u, flashinfer::mla::KernelTraits<2u, 8u, 64u, 64u, 64u, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, long>>", "BatchMLAPagedAttentionKernel<…>"},
	{"fmhaSm100fKernel_QkvE4m3OBfloat16H128PagedKvDenseP64MultiCtasKvCgaVarSeqQ8Kv128StaticKeepsAbForGen", "fmhaSm100fKernel_QkvE4m3OBfloat16H128PagedKvDenseP64MultiCtasKvCgaVarSeqQ8Kv128StaticKeepsAbForGen"},
	{"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int)#1}>", "elementwise_kernel<…>"},
	{"void moe::dev::routing::routingDeepSeek::routingMainKernel<moe::dev::routing::routingDeepSeek::KernelParams<__nv_bfloat16, float, float, false> >", "routingMainKernel<…>"},
	{"void deep_gemm::fp8_gemm_kernel<4096u, 7168u, 128u, 128u, 128u, 1u, 8u, 128u, 128u, 128u, (deep_gemm::GemmType)0>", "fp8_gemm_kernel<…>"},
	{"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"},
	// Generated library names (library.go): cuBLAS's xmma and legacy
	// kernels, CUTLASS 2 and 3, TensorRT-LLM's fmha_v2, as printed by
	// profilers in public reports and CUTLASS's documentation.
	{"sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", "xmma_tf32_tn_128x128x32"},
	{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", "xmma_bf16_tn_64x64x64"},
	{"sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", "xmma_f16_tn_128x128x64"},
	{"sm89_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize128x64x64_stage4_warpsize2x2x1_tensor16x8x32_algo2_execute_kernel__5x_cublas", "xmma_e4m3_tn_128x64x64"},
	{"sm89_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize256x64x64_stage4_warpsize4x1x1_tensor16x8x32_execute_kernel__5x_cublas", "xmma_e4m3_tn_256x64x64"},
	{"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas", "xmma_f32_nn_256x128x8"},
	{"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas", "xmma_f32_tn_64x64x8"},
	{"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas", "xmma_f32_tn_128x128x8"},
	{"sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize32x32x64_stage6_warpsize2x2x1_tensor16x8x16_execute_kernel__5x_cublas", "xmma_f16_tn_32x32x64"},
	{"sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize96x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel", "xmma_f16_tn_96x128x32"},
	{"sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize96x64x32_stage3_warpsize2x2x1_tensor16x8x16_kernel", "xmma_f16_nn_96x64x32"},
	{"void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x256_16x3_nn_align4>", "cutlass_s1688gemm_128x256_16x3_nn"},
	{"void cutlass::Kernel2<cutlass_80_tensorop_z884gemm_32x16_16x3_tt_align1>", "cutlass_z884gemm_32x16_16x3_tt"},
	{"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_tn_align8>", "cutlass_bf16_relu_256x128_32x3_tn"},
	{"cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_nn_align8", "cutlass_bf16_relu_256x128_32x3_nn"},
	{"void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_bf16_64x64_64x6_tn_align8>", "cutlass_bf16_64x64_64x6_tn"},
	{"cutlass_80_wmma_tensorop_f16_s161616gemm_f16_16x16_128x2_tn_align8", "cutlass_wmma_f16_16x16_128x2_tn"},
	{"cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x64_32x4_tn_align8", "cutlass_f16_relu_256x64_32x4_tn"},
	{"cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x128x64_2x1x1_0_tnt_align8_warpspecialized_cooperative_epi_tma", "cutlass3x_bf16_128x128x64_tnt"},
	{"cutlass3x_sm90_tensorop_s64x256x16gemm_f16_f16_f32_void_f16_128x256x64_2x1x1_0_tnn_align8_warpspecialized_cooperative_epi_tma", "cutlass3x_f16_128x256x64_tnn"},
	{"cutlass3x_sm90_tensorop_s64x128x16gemm_bf16_bf16_f32_void_bf16_128x128x64_1x1x1_0_tnn_align8_warpspecialized_pingpong_epi_tma", "cutlass3x_bf16_128x128x64_tnn"},
	{"cutlass3x_sm90_tensorop_s64x128x32gemm_e4m3_e4m3_f32_bf16_bf16_128x128x128_1x2x1_0_tnn_align16_warpspecialized_cooperative_epi_tma", "cutlass3x_e4m3_128x128x128_tnn"},
	{"cutlass3x_sm90_sptensorop_s64x256x64spgemm_e4m3_e4m3_f32_bf16_bf16_128x256x128_2x1x1_0_tnt_align32_warpspecialized_cooperative_fp8_fastaccum_epi_tma", "cutlass3x_sp_e4m3_128x256x128_tnt"},
	{"cutlass3x_sm90_tensorop_i64x128x32gemm_s8_s8_s32_bf16_bf16_128x128x128_2x1x1_0_tnt_align16_warpspecialized_pingpong_epi_tma", "cutlass3x_s8_128x128x128_tnt"},
	{"cutlass3x_sm90_tensorop_tf32gemm_f32_f32_f32_f32_f32_128x128x32_2x1x1_0_tnn_align4", "cutlass3x_tf32_128x128x32_tnn"},
	{"fmha_v2_flash_attention_fp16_64_32_S_qkv_128_causal_sm86_kernel_nl", "fmha_fp16_64_32_qkv_128_causal"},
	{"fmha_v2_flash_attention_fp16_64_256_S_32_tma_ws_sm90_kernel", "fmha_fp16_64_256_32"},
	{"fmha_v2_flash_attention_fp16_64_128_S_128_sm80_kernel", "fmha_fp16_64_128_128"},
	{"ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x3_nn", "ampere_bf16_128x64_64x3_nn"},
	{"ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_nn", "ampere_bf16_256x128_64x3_nn"},
	{"ampere_fp16_s1688gemm_fp16_128x128_ldg8_f2f_stages_32x1_nn", "ampere_fp16_128x128_32x1_nn"},
	{"trt_ampere_h16816gemm_128x64_ldg8_nn_v1", "trt_ampere_h16816gemm_128x64_nn"},
	{"trt_ampere_h16816gemm_256x64_ldg8_tn_v1", "trt_ampere_h16816gemm_256x64_tn"},
	// ROCm's Tensile GEMMs (rocBLAS, hipBLASLt), as rocprof, MIOpenDriver's
	// log and hipBLASLt's assembly sources print them; other ROCm kernels.
	{"Cijk_Ailk_Bljk_HHS_BH_MT128x128x16_MI16x16x16x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3_ASE_ASGT_ASAE01_ASCE01_ASEM1_AAC0_BL1_BS1_DTL0_DTVA0_DVO0_ETSP_EPS1_FL0_GRVW8_GSU1_GSUASB_GLS0_ISA1100_IU1_K1_KLA_LBSPP128_LPA0_LPB8_LDL1_LRVW16_LWPMn1_LDW0_FMA_MIAV1_MDA2_NTA0_NTB0_NTC0_NTD0_NEPBS0_NLCA1_NLCB1_ONLL1_OPLV0_PK0_PAP0_PGR1_PLR1_RK0_SIA1_SS1_SU32_SUM0_SUS128_SCIUI1_SPO0_SRVW0_SSO0_SVW4_SNLL0_TT4_64_TLDS1_USFGROn1_VAW2_VSn1_VW4_WSGRA1_WSGRB1_WS32_WG32_4_1_WGM4", "Cijk_Ailk_Bljk_HHS_MT128x128x16"},
	{"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_SN_LDSB1_GRPM1_GSU1_ISA950_K1_WG32_8_1", "Cijk_Alik_Bljk_BBS_MT256x256x64"},
	{"Custom2_Cijk_Ailk_Bljk_HHS_BH_MT128x32x64_MI32x32x8x1_SN_1LDSB0_GRVW8_GSU18_LPB8_LRVW4_MIWT1_1_NTA2_NTB0_NEPBS0_NLCA1_PLR9_SS0_SU0_SUS0_SPO0_SRVW0_SVW4_VW1_WSGRA1_WSGRB0_WG128_2_1_WGM0", "Cijk_Ailk_Bljk_HHS_MT128x32x64"},
	{"Custom_Cijk_Ailk_Bljk_HHS_BH_MT16x16x64_MI16x16x16x1_SN_1LDSB0_GRVW8_GSU25_GSUAMB_K1_LPB16_LRVW8_MIWT1_1_NEPBS0_NLCA1_PLR5_SS0_SU0_SUS0_SPO1_SRVW0_SVW4_VW8_WSGRA0_WSGRB0_WG16_4_1_WGM8_M", "Cijk_Ailk_Bljk_HHS_MT16x16x64"},
	{"Custom_Cijk_Ailk_Bljk_HHS_BH_MT128x16x128_MI16x16x1_0_Equality_gfx942", "Cijk_Ailk_Bljk_HHS_MT128x16x128"},
	{"CustomGSUs_Cijk_Ailk_Bljk_HHS_BH_Bias_AS_SAV_MT32x16x16_MI16x16x1_prefetch", "Cijk_Ailk_Bljk_HHS_MT32x16x16"},
	{"Cijk_Alik_Bljk_SB_MT32x64x32_SE_K1", "Cijk_Alik_Bljk_SB_MT32x64x32"},
	{"Cijk_Alik_Bljk_BBH_MT32x64x64_SE_APM1_AF0EM8_AF1EM1_AMAS3_ASBE01_ASEM8_BL1_DTL0_EPS1_FL0_GRVW2_GSU1_ISA908_IU1_K1_KLA_LBSPPn1_LPA0_LPB0_LDL1_NLCA1_NLCB1_ONLL1_PBD0_PK0_PGR1_PLR1_RK1_SIA1_SU32_SUM0_SUS256_SRVW0_SNLL0_TT2_2_TLDS0_USFGROn1_VAW1_VSn1_VW2_WSGRA0_WSGRB0_WG16_32_1_WGM8", "Cijk_Alik_Bljk_BBH_MT32x64x64"},
	{"Cijk_Ailk_Bjlk_DB_MT064x064x08_K1_NLCA01_NLCB01_TT04_04_USFGRO0_WG16_16_01", "Cijk_Ailk_Bjlk_DB_MT064x064x08"},
	{"Cijk_Ailk_Bjlk_SB", "Cijk_Ailk_Bjlk_SB"}, // a library file's name, no tile: as written
	{"__amd_rocclr_fillBufferAligned", "__amd_rocclr_fillBufferAligned"},
	{"__amd_rocclr_fillBufferAligned.kd", "__amd_rocclr_fillBufferAligned"},
	{"__amd_rocclr_copyBuffer", "__amd_rocclr_copyBuffer"},
	{"void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<ck::tensor_layout::gemm::RowMajor, ck::tensor_layout::gemm::RowMajor, ck::tensor_layout::gemm::RowMajor, ck::half_t, ck::half_t, float, ck::half_t> >", "kernel_gemm_xdl_cshuffle_v3<…>"},
	{"triton_poi_fused__to_copy_0", "triton_poi_fused__to_copy_0"},
	{"_attn_fwd", "_attn_fwd"},
}

func TestDisplayRealNames(t *testing.T) {
	t.Parallel()
	if len(realNames) < 60 {
		t.Fatalf("only %d names", len(realNames))
	}
	for _, c := range realNames {
		if got := Display(c.short); got != c.display {
			t.Errorf("Display(%q)\n  = %q\n want %q", c.short, got, c.display)
		}
	}
}

// TestDisplayRules: each rule of Display on its own.
func TestDisplayRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"fused_moe_kernel", "fused_moe_kernel"},                            // a plain identifier
		{"void foo", "foo"},                                                 // return type
		{"void a::b::foo<int>", "foo<…>"},                                   // namespaces, template
		{"void (anonymous namespace)::foo<int>", "foo<…>"},                  // anonymous namespace
		{"nccl_k(Args<1>)", "nccl_k"},                                       // a parameter list glued to the name
		{"Memset (Device)", "Memset (Device)"},                              // plain text keeps its words
		{"void cutlass::device_kernel<ns::K<1> >", "K<…>"},                  // a wrapper launches K
		{"void cutlass::device_kernel<3>", "device_kernel<…>"},              // a wrapper of nothing named
		{"void f<(E)1>", "f<…>"},                                            // casts in the arguments
		{"void a::f<x>::g<y>", "g<…>"},                                      // a member of a class template
		{"", ""},                                                            // nothing
		{"weird name with <brackets", "weird name with <brackets"},          // not a C++ name: as written
		{"void ns::op<a, b>(int (*)(float), float)", "op<…>"},               // nested parameter types
		{"void at::native::f<1, at::native::g(int)::{lambda()#1}>", "f<…>"}, // a lambda argument
	} {
		if got := Display(c.in); got != c.want {
			t.Errorf("Display(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestLabelsDistinct: the labels of a table are distinct whenever its
// names are, equal names share one, and a name that collides with no
// other keeps its display name.
func TestLabelsDistinct(t *testing.T) {
	t.Parallel()
	var shorts []string
	for _, c := range realNames {
		shorts = append(shorts, c.short)
	}
	labels := Labels(append(shorts, shorts[0]))
	if labels[len(shorts)] != labels[0] {
		t.Errorf("a repeated name got %q and %q", labels[0], labels[len(shorts)])
	}
	labels = labels[:len(shorts)]
	owner := map[string]string{}
	count := map[string]int{}
	for _, c := range realNames {
		count[c.display]++
	}
	for i, l := range labels {
		if o, ok := owner[l]; ok {
			t.Errorf("label %q for both\n  %s\n  %s", l, o, shorts[i])
		}
		owner[l] = shorts[i]
		if count[realNames[i].display] == 1 && l != realNames[i].display {
			t.Errorf("%s: label %q, want its display name %q (no other name shares it)", shorts[i], l, realNames[i].display)
		}
		if strings.Contains(l, "#") && !strings.Contains(shorts[i], "#") {
			t.Errorf("%s: label %q numbers the name", shorts[i], l)
		}
	}
}

// TestLabelsParts: which part tells names apart, per set.
func TestLabelsParts(t *testing.T) {
	t.Parallel()
	deep := func(n, k string) string {
		return "void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0, 0u, " + n + "u, " + k + "u, 128u, 112u, 128u, 1u, 4u, 2u, 32u, 128u, 128u, 148u, 1u, false, (deep_gemm::GemmType)0, false, cutlass::bfloat16_t>"
	}
	for _, c := range []struct {
		name string
		in   []string
		want []string
	}{
		{"DeepGEMM: the shape arguments, as few as tell them apart",
			[]string{deep("2112", "7168"), deep("24576", "1536"), deep("7168", "16384"), deep("7168", "18432"), "fused_moe_kernel"},
			[]string{"sm100_fp8_gemm_1d1d_impl<…, 2112u, 7168u, …>", "sm100_fp8_gemm_1d1d_impl<…, 24576u, 1536u, …>",
				"sm100_fp8_gemm_1d1d_impl<…, 7168u, 16384u, …>", "sm100_fp8_gemm_1d1d_impl<…, 7168u, 18432u, …>", "fused_moe_kernel"}},
		{"DeepGEMM: one shape argument is enough for two",
			[]string{deep("2112", "7168"), deep("24576", "7168")},
			[]string{"sm100_fp8_gemm_1d1d_impl<…, 2112u, …>", "sm100_fp8_gemm_1d1d_impl<…, 24576u, …>"}},
		{"a name alone keeps its display name",
			[]string{deep("2112", "7168"), "void vllm::rms_norm_kernel<c10::BFloat16>"},
			[]string{"sm100_fp8_gemm_1d1d_impl<…>", "rms_norm_kernel<…>"}},
		{"the innermost namespace that differs",
			[]string{"void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &silu<float> >", "void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>"},
			[]string{"activation::act_and_mul_kernel<…>", "vllm::act_and_mul_kernel<…>"}},
		{"a namespace against none",
			[]string{"void cross_device_reduce_1stage<__nv_bfloat16, 2>", "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>"},
			[]string{"cross_device_reduce_1stage<…>", "vllm::cross_device_reduce_1stage<…>"}},
		{"an argument only one has, names before numbers",
			[]string{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >",
				"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >"},
			[]string{"vectorized_elementwise_kernel<…, CUDAFunctor_add, …>", "vectorized_elementwise_kernel<…, FillFunctor, …>"}},
		{"NCCL: the parameter list when nothing else differs",
			[]string{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<8192ul>)"},
			[]string{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(…, 4096ul)", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(…, 8192ul)"}},
		{"FlashInfer: the index type",
			[]string{"void flashinfer::BatchPrefillWithRaggedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::MaskMode)1, 128u, (flashinfer::PosEncodingMode)0, __nv_bfloat16, float, int>, flashinfer::RaggedParams<__nv_bfloat16, int> >",
				"void flashinfer::BatchPrefillWithRaggedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::MaskMode)1, 128u, (flashinfer::PosEncodingMode)0, __nv_bfloat16, float, long>, flashinfer::RaggedParams<__nv_bfloat16, long> >"},
			[]string{"BatchPrefillWithRaggedKVCacheKernel<…, int, …>", "BatchPrefillWithRaggedKVCacheKernel<…, long, …>"}},
		{"cuBLAS: the architecture, when the kernels differ in more than it",
			[]string{"sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_stage3_warpsize2x2x1_tensor16x8x16_kernel",
				"sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"},
			[]string{"sm80_xmma_f16_tn_128x128x64", "sm90_xmma_f16_tn_128x128x64"}},
		{"cuBLAS: the parts that differ, in place",
			[]string{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
				"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_on_kernel__5x_cublas",
				"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
				"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"},
			[]string{"xmma_bf16_tn_128x128x64_warpgroupsize1x1x1_segment_k_off", "xmma_bf16_tn_128x128x64_warpgroupsize1x1x1_segment_k_on",
				"xmma_bf16_tn_128x128x64_warpgroupsize2x1x1_segment_k_off", "xmma_bf16_tn_256x128x64"}},
		{"cuBLAS: a type group shown as written where only it differs",
			[]string{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
				"sm90_xmma_gemm_bf16bf16_bf16f16_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"},
			[]string{"xmma_bf16f32_tn_128x128x64", "xmma_bf16f16_tn_128x128x64"}},
		{"CUTLASS 3: the schedule",
			[]string{"cutlass3x_sm90_tensorop_s64x128x16gemm_bf16_bf16_f32_void_bf16_128x128x64_1x1x1_0_tnn_align8_warpspecialized_pingpong_epi_tma",
				"cutlass3x_sm90_tensorop_s64x128x16gemm_bf16_bf16_f32_void_bf16_128x128x64_1x1x1_0_tnn_align8_warpspecialized_cooperative_epi_tma"},
			[]string{"cutlass3x_bf16_128x128x64_tnn_pingpong", "cutlass3x_bf16_128x128x64_tnn_cooperative"}},
		{"CUTLASS 2: the alignment",
			[]string{"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>",
				"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align2>"},
			[]string{"cutlass_bf16_relu_64x64_64x4_tn_align8", "cutlass_bf16_relu_64x64_64x4_tn_align2"}},
		{"fmha_v2: the kernel variant",
			[]string{"fmha_v2_flash_attention_bf16_64_128_S_qkv_128_causal_sm90_kernel_nl_tiled", "fmha_v2_flash_attention_bf16_64_128_S_qkv_128_causal_sm90_kernel_nl"},
			[]string{"fmha_bf16_64_128_qkv_128_causal_kernel_nl_tiled", "fmha_bf16_64_128_qkv_128_causal_kernel_nl"}},
		{"Tensile: the matrix instruction, the flags, in place",
			[]string{"Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_GRVW8_GSU1_K1_WG32_4_1",
				"Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI16x16x16x1_SN_1LDSB0_GRVW8_GSU1_K1_WG32_4_1",
				"Cijk_Ailk_Bljk_HHS_B_MT128x128x32_MI16x16x16x1_SN_1LDSB0_GRVW8_GSU1_K1_WG32_4_1",
				"Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI16x16x16x1_SN_1LDSB0_GRVW8_GSU1_K1_WG64_4_1"},
			[]string{"Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_WG32_4_1", "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI16x16x16x1_WG32_4_1",
				"Cijk_Ailk_Bljk_HHS_B_MT128x128x32_MI16x16x16x1_WG32_4_1", "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI16x16x16x1_WG64_4_1"}},
		{"Tensile: the features before the tile, whole",
			[]string{"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_SN_LDSB1_GSU1_ISA950_K1_WG32_8_1",
				"Cijk_Alik_Bljk_BBS_BH_MT256x256x64_MI16x16x1_SN_LDSB1_GSU1_ISA942_K1_WG32_8_1"},
			[]string{"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64", "Cijk_Alik_Bljk_BBS_BH_MT256x256x64"}},
		{"a library name beside a plain name it would equal keeps both apart",
			[]string{"xmma_bf16_tn_128x128x64", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"},
			[]string{"xmma_bf16_tn_128x128x64", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"}},
		{"a template whose arguments one name only extends: shown whole",
			[]string{"void f<a, b>", "void f<a, b, c>", "void f<a>"},
			[]string{"f<a, b>", "f<…, c>", "f<a>"}},
	} {
		got := Labels(c.in)
		for i := range c.want {
			if got[i] != c.want[i] {
				t.Errorf("%s: label %d = %q, want %q", c.name, i, got[i], c.want[i])
			}
		}
	}
}

// TestLibraryNamesShort: every generated library name of realNames is
// taken apart into parts that make up the whole name, and its display
// name shows its tile within 32 characters (the least a kernel column gets
// at 120 columns), where the whole name put it at character 40 to 90.
func TestLibraryNamesShort(t *testing.T) {
	t.Parallel()
	tileRe := regexp.MustCompile(`(?:tilesize|_|_MT)([0-9]+x[0-9]+(?:x[0-9]+)?|[0-9]+_[0-9]+_S)_`)
	n := 0
	for _, c := range realNames {
		p := Split(c.short)
		if p.lib == nil {
			if strings.Contains(c.short, "xmma_") || strings.Contains(c.short, "cutlass_") || strings.HasPrefix(c.short, "fmha_v2") || strings.Contains(c.short, "_MT") {
				t.Errorf("%s: not taken apart as a library name", c.short)
			}
			continue
		}
		n++
		var raws []string
		for _, s := range p.lib {
			raws = append(raws, s.raw)
		}
		if got := strings.Join(raws, "_"); got != p.Name {
			t.Errorf("%s: parts make %q", p.Name, got)
		}
		m := tileRe.FindStringSubmatch(p.Name)
		if m == nil {
			t.Fatalf("%s: test finds no tile", p.Name)
		}
		tile := strings.TrimSuffix(m[1], "_S")
		d := Display(c.short)
		if i := strings.Index(d, tile); i < 0 || i+len(tile) > 32 {
			t.Errorf("%s: display %q does not show tile %s within 32 characters", p.Name, d, tile)
		}
	}
	if n < 30 {
		t.Errorf("only %d library names", n)
	}
}
