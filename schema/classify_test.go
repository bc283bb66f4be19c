package schema_test

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/migrations"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// ladder is the classifier's family order, restated here (memcpy and memset share
// step 2, memcpy first).
var ladder = []string{
	"communication", "memcpy", "memset", "attention", "hybrid_linear", "moe",
	"gemm", "norm", "rope", "softmax", "activation", "quantize", "sampling",
	"reduce_topk", "elementwise", "kv_cache",
}

// categoryOf is the family -> category table, restated
// independently of the migration.
var categoryOf = map[string]string{
	"gemm": "compute", "attention": "compute", "moe": "compute", "hybrid_linear": "compute",
	"communication": "communication",
	"memcpy":        "memory", "memset": "memory", "kv_cache": "memory",
	"norm": "elementwise", "rope": "elementwise", "softmax": "elementwise",
	"activation": "elementwise", "quantize": "elementwise", "sampling": "elementwise",
	"reduce_topk": "elementwise", "elementwise": "elementwise",
	"other": "other",
}

type pinned struct {
	name     string // raw, as the trace writes it (mangled or not)
	family   string
	category string
}

// pinnedNames are real kernel names from CUDA and ROCm serving traces (and
// names that look like another family than they are) with the family and
// category the report must show.
var pinnedNames = []pinned{
	// attention
	{"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(flash::Flash_fwd_params)", "attention", "compute"},
	{"void flash::flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, 4, 3, true>(flash::Flash_fwd_params)", "attention", "compute"},
	{"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<112>, cute::C<192> >, 192, cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false, false, true, false, false, false, true, true, false, false>, flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cutlass::bfloat16_t, cutlass::arch::Sm90, 256, true, true, false, false>, flash::VarlenDynamicPersistentTileScheduler<128, 256, 128, false, true, true> > > >(flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<112>, cute::C<192> >, 192, cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false, false, true, false, false, false, true, true, false, false>, flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cutlass::bfloat16_t, cutlass::arch::Sm90, 256, true, true, false, false>, flash::VarlenDynamicPersistentTileScheduler<128, 256, 128, false, true, true> > >::Params)", "attention", "compute"},
	{"void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::PosEncodingMode)0, 2u, 4u, 8u, 16u, 1u, 8u, flashinfer::DefaultAttention<false, false, false, false>, flashinfer::BatchDecodeParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> >(flashinfer::BatchDecodeParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)", "attention", "compute"},
	{"void flashinfer::BatchPrefillWithRaggedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::MaskMode)1, 128u, 2u, 4u, 2u, 4u, 1u, (flashinfer::PosEncodingMode)0, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, int, flashinfer::DefaultAttention<false, false, false, false> >, flashinfer::BatchPrefillRaggedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> >(flashinfer::BatchPrefillRaggedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)", "attention", "compute"},
	{"void flashinfer::BatchPrefillWithPagedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::MaskMode)0, 16u, 1u, 8u, 2u, 4u, 1u, (flashinfer::PosEncodingMode)0, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, int, flashinfer::DefaultAttention<false, false, false, false> >, flashinfer::BatchPrefillPagedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> >(flashinfer::BatchPrefillPagedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)", "attention", "compute"},
	{"void flashinfer::mla::BatchMLAPagedAttentionKernel<(flashinfer::MaskMode)0, 512u, 64u, flashinfer::mla::KernelTraits<2u, 8u, 64u, 64u, 64u, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, long>>(flashinfer::MLAParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, long>)", "attention", "compute"},
	{"void flashinfer::MergeStatesKernel<8u, 16u, 8u, 1u, __nv_bfloat16, __nv_bfloat16>(__nv_bfloat16*, float*, __nv_bfloat16*, float*, unsigned int, unsigned int, unsigned int)", "attention", "compute"},
	{"_fwd_kernel_stage1", "attention", "compute"},
	{"_fwd_kernel_stage2", "attention", "compute"},
	{"_fwd_grouped_kernel_stage1", "attention", "compute"},
	{"_fwd_kernel", "attention", "compute"},
	{"kernel_unified_attention_2d", "attention", "compute"},
	{"fmha_v2_flash_attention_bf16_64_128_S_qkv_128_sm90_kernel_nl", "attention", "compute"},
	{"fmhaSm100fKernel_QkvE4m3OBfloat16H128PagedKvDenseP64MultiCtasKvCgaVarSeqQ8Kv128StaticKeepsAbForGen", "attention", "compute"},
	{"kernel_mha", "attention", "compute"},
	{"void xqa::kernel_mha<__nv_bfloat16>(unsigned int, float, __nv_bfloat16*, __nv_bfloat16 const*)", "attention", "compute"},
	{"void vllm::paged_attention_v2_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128, (vllm::Fp8KVCacheDataType)0, false, 512>(float*, float*, __nv_bfloat16*, __nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16 const*, int, float, int const*, int const*, int, float const*, int, int, int, float const*, float const*, int, int, int)", "attention", "compute"},
	{"void vllm::paged_attention_v2_reduce_kernel<__nv_bfloat16, 128, 128, 512>(__nv_bfloat16*, float const*, float const*, __nv_bfloat16 const*, int const*, int)", "attention", "compute"},
	{"void flash_fwd_splitkv_mla_kernel<Flash_fwd_kernel_traits_mla<576, 64, 64, 8, cutlass::bfloat16_t, 512>, true, SharedStorageMLA<Flash_fwd_kernel_traits_mla<576, 64, 64, 8, cutlass::bfloat16_t, 512> > >(Flash_fwd_mla_params)", "attention", "compute"},
	{"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0", "attention", "compute"},
	{"_attn_fwd", "attention", "compute"},
	// ROCm attention: composable kernel (mangled), AITER (mangled and not).
	{"_ZN7ck_tile6kentryILi1ENS_13FmhaFwdKernelIiEEJNS1_5KargsEEEEvDpT1_", "attention", "compute"},
	{"_ZN5aiter3mlaILi128EEEvPf", "attention", "compute"},
	{"_ZN5aiter39mla_dec_stage1_bf16_a16w16_subQ16_mqa16E", "attention", "compute"},
	{"_ZN5aiter39paged_attention_ll4mi_QKV_mfma16_kernelIDF16bDF16bLi16ELi128ELi256ELb1ELi1EEEvPKT_Pf", "attention", "compute"},

	// gemm
	{"nvjet_tst_192x192_64x3_2x1_v_bz_coopB_TNT", "gemm", "compute"},
	{"nvjet_tst_128x64_64x8_1x2_h_bz_coopA_NTT", "gemm", "compute"},
	{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", "gemm", "compute"},
	{"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_nn", "gemm", "compute"},
	{"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8::Params)", "gemm", "compute"},
	{"cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8", "gemm", "compute"},
	{"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<4, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1> >, cutlass::gemm::KernelTmaWarpSpecializedCooperative>, cute::tuple<cute::C<128>, cute::C<128>, cute::C<64> >, cutlass::bfloat16_t, cute::tuple<long, cute::C<1>, long>, cutlass::bfloat16_t, cute::tuple<long, cute::C<1>, long>, cute::TiledMMA<cute::MMA_Atom<cute::SM90_64x128x16_F32BF16BF16_SS<(cute::GMMA::Major)0, (cute::GMMA::Major)0, (cute::GMMA::ScaleIn)1, (cute::GMMA::ScaleIn)1> > >, cute::SM90_TMA_LOAD, cute::ComposedLayout<cute::Swizzle<3, 4, 3>, cute::smem_ptr_flag_bits<16>, cute::Layout<cute::tuple<cute::C<8>, cute::C<64> >, cute::tuple<cute::C<64>, cute::C<1> > > >, void, cute::identity> >, void> >(cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, void, void>::Params)", "gemm", "compute"},
	{"void deep_gemm::sm90_fp8_gemm_1d2d_impl<0u, 4096u, 7168u, 1u, 128u, 128u, 128u, 1u, 4u, 1u, 128u, 128u, 1u, 1u, true, (deep_gemm::GemmType)0, 0>(float*, int*, unsigned int, unsigned int, unsigned int, __grid_constant__ CUtensorMap, __grid_constant__ CUtensorMap, __grid_constant__ CUtensorMap, __grid_constant__ CUtensorMap)", "gemm", "compute"},
	{"void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, true, false, false>(cublasLt::cublasSplitKParams<float>, float const*, __nv_bfloat16 const*, __nv_bfloat16*, float const*, float const*, __nv_bfloat16 const*, float const*, __nv_bfloat16*, void*, long, float*, int*)", "gemm", "compute"},
	{"void gemv2T_kernel_val<int, int, __nv_bfloat16, __nv_bfloat16, float, 128, 16, 4, 4, false, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float> >(cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>, float, float)", "gemm", "compute"},
	{"void marlin::Marlin<__nv_bfloat16, 4, 256, 1, 8, 8, false, 8>(int4 const*, int4 const*, int4*, int4*, int4 const*, int4 const*, int const*, int, int, int, int, int*, bool, bool, int)", "gemm", "compute"},
	{"matmul_kernel_persistent", "gemm", "compute"},
	{"Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI16x16x16x1_SN_1LDSB0_GRVW8_GSU1_ISA942_K1_LBSPP128_LPA0_LPB8_LRVW16_MIAV1_MMFGLC_NLCA1_NLCB1_PGR2_PLR1_SIA3_SS1_SU32_SUM0_SUS128_SVW4_TT4_64_TLDS1_USFGROn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG32_8_1", "gemm", "compute"},
	{"void wvSplitK_hf_sml_<__hip_bfloat16, 64, 2, 16, 8, 2, 1>(int, int, int, int, int, __hip_bfloat16 const*, __hip_bfloat16 const*, __hip_bfloat16 const*, __hip_bfloat16*, int, int)", "gemm", "compute"},
	{"void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<ck::tensor_layout::gemm::RowMajor, ck::tensor_layout::gemm::ColumnMajor, ck::tensor_layout::gemm::RowMajor, ck::half_t, ck::half_t, float, ck::half_t> >(ck::GridwiseGemm_xdl_cshuffle_v3<ck::tensor_layout::gemm::RowMajor>::Argument)", "gemm", "compute"},

	// moe
	{"fused_moe_kernel", "moe", "compute"},
	{"void moe::dev::routing::routingDeepSeek::routingMainKernel<moe::dev::routing::routingDeepSeek::KernelParams<__nv_bfloat16, float, float, false> >(moe::dev::routing::routingDeepSeek::KernelParams<__nv_bfloat16, float, float, false>)", "moe", "compute"},
	{"void vllm::moe::topkGatingSoftmax<8, 8, 4, 16, int>(float const*, bool const*, float*, int, int*, int*, int, int, int)", "moe", "compute"},
	{"void vllm::moe::moe_align_block_size_kernel<int>(int const*, int*, int*, int*, int, int, int, unsigned long, unsigned long)", "moe", "compute"},
	{"void vllm::moe::count_and_sort_expert_tokens_kernel<int>(int const*, int*, int*, unsigned long)", "moe", "compute"},
	{"void vllm::moe::moe_sum_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16 const*, int)", "moe", "compute"},
	{"void tensorrt_llm::kernels::cutlass_kernels::expandInputRowsKernel<__nv_bfloat16, __nv_bfloat16>(__nv_bfloat16 const*, __nv_bfloat16*, float const*, float*, int const*, int*, long, long, long, int, long const*)", "moe", "compute"},
	{"_ZN5aiter47fmoe_bf16_blockscaleFp8_g1u1_vs_silu_1tg_32x256E", "moe", "compute"},

	// norm
	{"void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, unsigned int, float, float)", "norm", "elementwise"},
	{"void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, unsigned int, float, float)", "norm", "elementwise"},
	{"void vllm::rms_norm_kernel<c10::BFloat16, 8, 3>(c10::BFloat16*, c10::BFloat16 const*, long, c10::BFloat16 const*, float, int, int)", "norm", "elementwise"},
	{"void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, float, int, int)", "norm", "elementwise"},
	{"gemma_fused_add_rmsnorm", "norm", "elementwise"},
	{"void flashinfer::norm::GemmaFusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, unsigned int, float, float)", "norm", "elementwise"},
	{"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)", "norm", "elementwise"},
	{"triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", "norm", "elementwise"},
	{"_ZN5aiter24add_rmsnorm_quant_kernelIDF16bLi256ELi8ELb1EEEvPT_PKS1_S4_fi", "norm", "elementwise"},
	{"void sgl_hip::fused_add_rms_norm_kernel<__hip_bfloat16, 8>(__hip_bfloat16*, __hip_bfloat16*, __hip_bfloat16 const*, float, int, int)", "norm", "elementwise"},

	// rope
	{"void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)", "rope", "elementwise"},
	{"void flashinfer::BatchQKApplyRotaryPosIdsCosSinCacheHeadParallelismKernel<false, 128u, 8u, 16u, __nv_bfloat16, long>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, float*, long*, unsigned int, unsigned int, unsigned int, unsigned int, unsigned long, unsigned long, unsigned long, unsigned long, unsigned long, unsigned long, unsigned long, unsigned long)", "rope", "elementwise"},
	{"void flashinfer::MLARopeQuantizeKernel<false, 128u, 8u, 16u, __nv_bfloat16, long, __nv_fp8_e4m3>()", "rope", "elementwise"},

	// softmax
	{"void (anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, (anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)", "softmax", "elementwise"},
	{"void at::native::(anonymous namespace)::cunn_SoftMaxForwardSmem<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)", "softmax", "elementwise"},

	// activation
	{"void vllm::act_and_mul_kernel<c10::BFloat16, &(float vllm::silu_kernel<float>(float const&)), true>(c10::BFloat16*, c10::BFloat16 const*, int)", "activation", "elementwise"},
	{"void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &(silu(float const&))>(__nv_bfloat16*, __nv_bfloat16 const*, int)", "activation", "elementwise"},
	{"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)", "activation", "elementwise"},
	{"void sgl_hip::act_and_mul_kernel<__hip_bfloat16, &(float sgl_hip::silu<float>(float const&)), true>(__hip_bfloat16*, __hip_bfloat16 const*, int)", "activation", "elementwise"},
	{"triton_poi_fused_mul_silu_0", "activation", "elementwise"},

	// quantize
	{"_per_token_group_quant_fp8", "quantize", "elementwise"},
	{"void per_token_group_quant_8bit_kernel<__nv_bfloat16, c10::Float8_e4m3fn, false, false>(__nv_bfloat16 const*, void*, float*, int, int, int, float, float, float, int, int)", "quantize", "elementwise"},
	{"void vllm::dynamic_per_token_scaled_fp8_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn, false>(c10::Float8_e4m3fn*, float*, c10::BFloat16 const*, float const*, int)", "quantize", "elementwise"},
	{"_ZN5aiter37dynamic_per_token_scaled_quant_kernelIDF16bN3c1013Float8_e4m3fnEEEvPT0_PKT_Pfi", "quantize", "elementwise"},

	// sampling, reduce_topk
	{"void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u, (cub::BlockScanAlgorithm)0, (cub::BlockReduceAlgorithm)2, 4u, false, float, int>(float*, int*, int*, int*, float*, float*, unsigned int, unsigned long, unsigned long)", "sampling", "elementwise"},
	{"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4> >(at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4>)", "sampling", "elementwise"},
	{"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)", "reduce_topk", "elementwise"},
	{"void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(at::cuda::detail::TensorInfo<float const, unsigned int>, unsigned int, unsigned int, bool, unsigned int, unsigned int, at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int, float*)", "reduce_topk", "elementwise"},

	// elementwise
	{"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::BFloat16>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<c10::BFloat16>, at::detail::Array<char*, 1>)", "elementwise", "elementwise"},
	{"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})", "elementwise", "elementwise"},
	{"void at::native::(anonymous namespace)::CatArrayBatchedCopy_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 2, 128, 1>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)", "elementwise", "elementwise"},
	{"void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&, bool)::{lambda(int)#1}>(long, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&, bool)::{lambda(int)#1})", "elementwise", "elementwise"},
	{"void at::native::_scatter_gather_elementwise_kernel<128, 8, at::native::_cuda_scatter_gather_internal_kernel<true, float>::operator()<at::native::ReduceAdd>(at::TensorIterator&, long, long, long, at::native::ReduceAdd const&)::{lambda(int)#1}>(int, at::native::_cuda_scatter_gather_internal_kernel<true, float>::operator()<at::native::ReduceAdd>(at::TensorIterator&, long, long, long, at::native::ReduceAdd const&)::{lambda(int)#1})", "elementwise", "elementwise"},
	{"triton_poi_fused_add_mul_0", "elementwise", "elementwise"},

	// communication
	{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "communication", "communication"},
	{"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "communication", "communication"},
	{"ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", "communication", "communication"},
	{"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)", "communication", "communication"},
	{"void vllm::cross_device_reduce_2stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)", "communication", "communication"},
	{"void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_lamport<__nv_bfloat16, 8, (flashinfer::trtllm_allreduce_fusion::AllReduceFusionPattern)1, true, false, false>(flashinfer::trtllm_allreduce_fusion::AllReduceFusionParams<__nv_bfloat16>)", "communication", "communication"},
	{"void tensorrt_llm::kernels::ar_fusion::allreduce_fusion_kernel_twoshot_sync<(tensorrt_llm::kernels::AllReduceFusionPattern)3, __nv_bfloat16, 8, true>(tensorrt_llm::kernels::ar_fusion::AllReduceFusionParams)", "communication", "communication"},
	{"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*, float*, int*, int*, int4 const*, float const*, long const*, float const*, bool const*, int const*, int, int, int, int, int, int, int, void**, int, int, int)", "communication", "communication"},

	// memory
	{"Memcpy HtoD (Pageable -> Device)", "memcpy", "memory"},
	{"Memcpy DtoD (Device -> Device)", "memcpy", "memory"},
	{"Memcpy DtoH (Device -> Pinned)", "memcpy", "memory"},
	{"Memset (Device)", "memset", "memory"},
	{"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, __nv_bfloat16*, long const*, int, int, int, int, int, int, float const*, float const*)", "kv_cache", "memory"},
	{"void vllm::concat_and_cache_mla_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, long const*, int, int, int, int, int, int, float const*)", "kv_cache", "memory"},
	{"set_mla_kv_buffer_kernel", "kv_cache", "memory"},

	// hybrid_linear
	{"void causal_conv1d_fwd_kernel<Causal_conv1d_fwd_kernel_traits<128, 4, true, true, c10::BFloat16, c10::BFloat16> >(ConvParamsBase)", "hybrid_linear", "compute"},
	{"chunk_gated_delta_rule_fwd_kernel_h_blockdim64", "hybrid_linear", "compute"},
	{"fused_sigmoid_gating_delta_rule_update_kernel", "hybrid_linear", "compute"},
	{"_bmm_chunk_fwd_kernel", "hybrid_linear", "compute"},
	{"_chunk_scan_fwd_kernel", "hybrid_linear", "compute"},

	// Names of the synthetic demo traces (synth/), mangled ones included.
	{"_ZN7cutlass7Kernel2I66cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8EEvNT_6ParamsE", "gemm", "compute"},
	{"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_", "elementwise", "elementwise"},
	{"_ZN5aiter24add_rmsnorm_quant_kernelIN3c108BFloat16ELi256ELi8EEEvPT_PKS3_S6_fi", "norm", "elementwise"},
	{"xqa_kernel_dt_bf16_d_128_beam_1_kvt_bf16_pagedKV_32_nqpkv_8_m_8_sm_90", "attention", "compute"},
	{"void flash::prepare_varlen_num_blocks_kernel<1, true>(int, int, int, int const*, int const*, int const*, int const*, int const*, int, int, int, int, int, cutlass::FastDivmod, cutlass::FastDivmod, int*, int*, bool)", "attention", "compute"},
	{"void tensorrt_llm::kernels::applyBiasRopeUpdateKVCacheV2<__nv_bfloat16, __nv_bfloat16, 128, false, tensorrt_llm::kernels::KVBlockArray, true>(tensorrt_llm::kernels::QKVPreprocessingParams<__nv_bfloat16, tensorrt_llm::kernels::KVBlockArray>)", "rope", "elementwise"},
	{"void (anonymous namespace)::store_kvcache<8, 128, c10::BFloat16>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, long const*, long, long, long)", "kv_cache", "memory"},
	{"void tensorrt_llm::kernels::topKStage1<float, 128, 8>(float const*, float*, int*, float*, tensorrt_llm::kernels::FinishedState const*, int, int const*, int, int, int const*, int, bool const*)", "sampling", "elementwise"},
	{"void moe_fused_gate_kernel<float, 256, 8, 4, 8>(void*, void*, float*, int*, long, long, long, long, double)", "moe", "compute"},
	{"void at::native::(anonymous namespace)::tensor_kernel_scan_innermost_dim<int, std::plus<int> >(int*, int const*, unsigned int, unsigned int, int, std::plus<int>)", "other", "other"},

	// ROCm runtime copies and fills, SGLang EP MoE, Inductor templates
	{"__amd_rocclr_copyBuffer", "memcpy", "memory"},
	{"__amd_rocclr_fillBufferAligned", "memset", "memory"},
	{"_fwd_kernel_ep_scatter_1", "moe", "compute"},
	{"_fwd_kernel_ep_gather", "moe", "compute"},
	{"triton_tem_fused_addmm_0", "gemm", "compute"},
	{"void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long, float, float const*, float*, float*)", "norm", "elementwise"},

	// other, and the small/comma traps
	{"void at_cuda_detail::cub::DeviceRadixSortOnesweepKernel<at_cuda_detail::cub::DeviceRadixSortPolicy<long, long, int>::Policy900, false, long, long, int, int, at_cuda_detail::cub::detail::identity_decomposer_t>(int*, int*, long*, long*, long*, long*, int, int, int, at_cuda_detail::cub::detail::identity_decomposer_t)", "other", "other"},
	{"comma_separated_kernel", "other", "other"},
	{"small_gather_kernel", "elementwise", "elementwise"},
	{"smallreduce_kernel", "reduce_topk", "elementwise"},
	{"void cutlass::device_kernel<GemmKernel<SmemLayoutAtomA, GmemLayoutB> >()", "gemm", "compute"},

	// FBGEMM (DLRM): the `gemm` of a parameter type or of the fbgemm_gpu
	// namespace does not make a GEMM (issue 34 item 0).
	{"void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 4l, 4l, false>(at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>, at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, long>, long, at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, long>, at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, long>, long, fbgemm_gpu::FixedDivisor, at::GenericPackedTensorAccessor<float, 2ul, at::RestrictPtrTraits, long>)", "elementwise", "elementwise"},
	{"void split_embedding_codegen_forward_unweighted_small_kernel<float, float, float, long>(at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>, long, fbgemm_gpu::FixedDivisor, at::GenericPackedTensorAccessor<float, 2ul, at::RestrictPtrTraits, long>)", "elementwise", "elementwise"},
	{"void split_embedding_codegen_forward_weighted_kernel<float, float, float, long, 4l, 4l, false>(at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>, long, fbgemm_gpu::FixedDivisor, at::GenericPackedTensorAccessor<float, 2ul, at::RestrictPtrTraits, long>)", "elementwise", "elementwise"},
	{"void bounds_check_indices_kernel<long>(at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, long>, long, fbgemm_gpu::FixedDivisor)", "other", "other"},
	{"void fbgemm_gpu::permute_2D_data_kernel<long, float>(int, int, int const*, int const*, int const*, long const*, float const*, int*, long*, float*)", "other", "other"},
	{"void fbgemm_gpu::_block_bucketize_sparse_features_cuda_kernel1<long>(int, int, long const*, long const*, long*)", "other", "other"},
}

// TestMain removes the warehouse templates the tests copy.
func TestMain(m *testing.M) { os.Exit(schematest.Main(m)) }

// openWarehouse returns a migrated warehouse of the test's own.
func openWarehouse(t testing.TB) *sql.DB {
	t.Helper()
	return schematest.Open(t, "").DB
}

// insertNames stores raw names the way ingest does: demangled form (when
// mangled), short and base names from the ingest package, family NULL.
func insertNames(t testing.TB, db *sql.DB, names []string) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO kernel_names (name_id, name, demangled, short_name, base_name)
		VALUES (nextval('name_id_seq'), ?, ?, ?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, n := range names {
		f := ingest.NormalizeKernelName(n)
		var dem any
		if f.Mangled {
			dem = f.Demangled
		}
		if _, err := st.ExecContext(ctx, n, dem, f.Short, f.Base); err != nil {
			t.Fatalf("insert %q: %v", n, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// classification reads family and category of every name.
func classification(t testing.TB, db *sql.DB) map[string][2]string {
	t.Helper()
	rows, err := db.Query(`SELECT name, coalesce(family, 'NULL'), coalesce(category, 'NULL') FROM kernel_names`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][2]string{}
	for rows.Next() {
		var n, f, c string
		if err := rows.Scan(&n, &f, &c); err != nil {
			t.Fatal(err)
		}
		out[n] = [2]string{f, c}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestClassifyPinnedNames(t *testing.T) {
	t.Parallel()
	if len(pinnedNames) < 60 {
		t.Fatalf("only %d pinned names", len(pinnedNames))
	}
	ctx := context.Background()
	db := openWarehouse(t)
	var names []string
	for _, p := range pinnedNames {
		if categoryOf[p.family] != p.category {
			t.Fatalf("test table: %s is %s, not %s", p.family, categoryOf[p.family], p.category)
		}
		if _, ok := ingest.Demangle(p.name); strings.HasPrefix(p.name, "_Z") && !ok {
			t.Errorf("test table: %s does not demangle", p.name)
		}
		names = append(names, p.name)
	}
	insertNames(t, db, names)
	n, err := schema.Classify(ctx, db, false)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(names)) {
		t.Errorf("Classify changed %d rows, want %d", n, len(names))
	}
	got := classification(t, db)
	for _, p := range pinnedNames {
		if g := got[p.name]; g != [2]string{p.family, p.category} {
			var rule sql.NullInt64
			db.QueryRow(`SELECT kernel_rule(coalesce(demangled, name)) FROM kernel_names WHERE name = ?`, p.name).Scan(&rule)
			t.Errorf("%s\n  got %s/%s (rule %v), want %s/%s", p.name, g[0], g[1], rule.Int64, p.family, p.category)
		}
	}
	// Nothing left to do: a second pass changes nothing, in either mode.
	for _, all := range []bool{false, true} {
		if n, err := schema.Classify(ctx, db, all); err != nil || n != 0 {
			t.Errorf("Classify(all=%v) again changed %d rows, %v", all, n, err)
		}
	}
}

// TestMangledNamesUseDemangledText: AITER's mangled `_ZN5aiter3mla...` has
// the length prefix glued to the keyword; only the demangled text
// `aiter::mla<128>` shows the token the rule needs.
func TestMangledNamesUseDemangledText(t *testing.T) {
	t.Parallel()
	db := openWarehouse(t)
	const raw = "_ZN5aiter3mlaILi128EEEvPf"
	dem, ok := ingest.Demangle(raw)
	if !ok || dem != "void aiter::mla<128>(float*)" {
		t.Fatalf("Demangle(%q) = %q, %v", raw, dem, ok)
	}
	var onRaw, onDemangled string
	if err := db.QueryRow(`SELECT kernel_family(?), kernel_family(?)`, raw, dem).Scan(&onRaw, &onDemangled); err != nil {
		t.Fatal(err)
	}
	if onRaw != "other" || onDemangled != "attention" {
		t.Fatalf("raw -> %s, demangled -> %s; want other, attention", onRaw, onDemangled)
	}
	insertNames(t, db, []string{raw})
	if _, err := schema.Classify(context.Background(), db, false); err != nil {
		t.Fatal(err)
	}
	if g := classification(t, db)[raw]; g != [2]string{"attention", "compute"} {
		t.Fatalf("stored %v", g)
	}
}

type rule struct {
	order                                   int
	family, keyword, pattern, example, note string
}

func loadRules(t *testing.T, db *sql.DB) []rule {
	t.Helper()
	rows, err := db.Query(`SELECT rule_order, family, keyword, pattern, example, note FROM classifier_rules ORDER BY rule_order`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var rs []rule
	for rows.Next() {
		var r rule
		if err := rows.Scan(&r.order, &r.family, &r.keyword, &r.pattern, &r.example, &r.note); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestClassifierRulesAreWellFormed(t *testing.T) {
	t.Parallel()
	db := openWarehouse(t)
	rules := loadRules(t, db)
	if len(rules) < 100 {
		t.Fatalf("only %d rules", len(rules))
	}
	var seen []string // families in rule order, runs collapsed
	for _, r := range rules {
		// DuckDB compiles the pattern (RE2) and rejects it when invalid.
		var m bool
		if err := db.QueryRow(`SELECT regexp_matches('', pattern) FROM classifier_rules WHERE rule_order = ?`, r.order).Scan(&m); err != nil {
			t.Errorf("rule %d: pattern %q does not compile in DuckDB: %v", r.order, r.pattern, err)
			continue
		}
		if r.pattern != strings.ToLower(r.pattern) || r.keyword != strings.ToLower(r.keyword) {
			t.Errorf("rule %d: pattern and keyword must be lower case (names are lowered)", r.order)
		}
		if !requiresLiteral(t, r.pattern, r.keyword) {
			t.Errorf("rule %d: pattern %q does not require its keyword %q: the pre-filter would skip matches", r.order, r.pattern, r.keyword)
		}
		if m {
			t.Errorf("rule %d: pattern %q matches the empty name", r.order, r.pattern)
		}
		if r.note == "" || r.example == "" {
			t.Errorf("rule %d: note and example are required", r.order)
		}
		if len(seen) == 0 || seen[len(seen)-1] != r.family {
			seen = append(seen, r.family)
		}
	}
	if !slices.Equal(seen, ladder) {
		t.Errorf("families in rule order: %v\nwant the ladder %v", seen, ladder)
	}
	// Every family has a category row, and the categories are those of the spec.
	rows, err := db.Query(`SELECT DISTINCT r.family, c.category FROM classifier_rules r LEFT JOIN family_categories c USING (family)
		UNION SELECT family, category FROM family_categories`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var f string
		var c sql.NullString
		if err := rows.Scan(&f, &c); err != nil {
			t.Fatal(err)
		}
		n++
		if !c.Valid {
			t.Errorf("family %s has no family_categories row", f)
		} else if categoryOf[f] != c.String {
			t.Errorf("family %s: category %s, want %q", f, c.String, categoryOf[f])
		}
	}
	if n != len(categoryOf) {
		t.Errorf("%d families with categories, want %d", n, len(categoryOf))
	}
}

// requiresLiteral reports whether every match of pattern contains lit: lit
// is inside a literal that the top-level concatenation cannot skip.
func requiresLiteral(t *testing.T, pattern, lit string) bool {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		t.Errorf("pattern %q: %v", pattern, err)
		return false
	}
	re = re.Simplify()
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	var run strings.Builder
	for _, s := range subs {
		for s.Op == syntax.OpCapture {
			s = s.Sub[0]
		}
		if s.Op == syntax.OpLiteral && s.Flags&syntax.FoldCase == 0 {
			run.WriteString(string(s.Rune))
			if strings.Contains(run.String(), lit) {
				return true
			}
			continue
		}
		run.Reset()
	}
	return false
}

// TestRuleExamples classifies each rule's own example: it must land in the
// rule's family (so no earlier family steals it), and its pattern must match.
func TestRuleExamples(t *testing.T) {
	t.Parallel()
	db := openWarehouse(t)
	// Every rule's example classified and cut as the rule sees it, in one
	// statement (one per rule planned kernel_family's rules each time).
	rows, err := db.Query(`SELECT rule_order, example, kernel_family(example),
			lower(CASE applies_to WHEN 'function' THEN kernel_function(example) ELSE kernel_call(example) END),
			regexp_matches(lower(CASE applies_to WHEN 'function' THEN kernel_function(example) ELSE kernel_call(example) END), pattern)
		FROM classifier_rules ORDER BY rule_order`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type seen struct {
		example, fam, text string
		m                  bool
	}
	got := map[int]seen{}
	for rows.Next() {
		var order int
		var s seen
		if err := rows.Scan(&order, &s.example, &s.fam, &s.text, &s.m); err != nil {
			t.Fatal(err)
		}
		got[order] = s
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, r := range loadRules(t, db) {
		g, ok := got[r.order]
		if !ok || g.example != r.example {
			t.Fatalf("rule %d: example %q read back as %q", r.order, r.example, g.example)
		}
		if !g.m {
			t.Errorf("rule %d: its example %q (as the rule sees it: %q) does not match %q", r.order, r.example, g.text, r.pattern)
		}
		if g.fam != r.family {
			t.Errorf("rule %d (%s): example %q classified %s", r.order, r.family, r.example, g.fam)
		}
		// The Go RE2 engine agrees with DuckDB's on every example.
		if !regexp.MustCompile(r.pattern).MatchString(g.text) {
			t.Errorf("rule %d: Go regexp disagrees on %q", r.order, r.example)
		}
	}
}

// TestLadderOrder: a name carrying keywords of two families gets the family
// that comes first in the ladder, for every pair of families.
func TestLadderOrder(t *testing.T) {
	t.Parallel()
	token := map[string]string{
		"communication": "nccl", "memcpy": "memcpy", "memset": "memset", "attention": "attention",
		"hybrid_linear": "mamba", "moe": "moe", "gemm": "gemm", "norm": "rmsnorm", "rope": "rotary",
		"softmax": "softmax", "activation": "silu", "quantize": "quant", "sampling": "sampling",
		"reduce_topk": "topk", "elementwise": "elementwise", "kv_cache": "kv_cache",
	}
	// name -> the family it must get, and why
	want := map[string][2]string{}
	for i, a := range ladder {
		for _, b := range ladder[i+1:] {
			for _, name := range []string{
				"x_" + token[a] + "_" + token[b] + "_kernel",
				"x_" + token[b] + "_" + token[a] + "_kernel",
			} {
				want[name] = [2]string{a, "comes before " + b}
			}
		}
	}
	// The spec's named orderings, on real-looking names.
	for name, fam := range map[string]string{
		"fused_allreduce_residual_rmsnorm_kernel":             "communication",
		"void tensorrt_llm::kernels::allreduce_rmsnorm_fp8<>": "communication",
		"fused_moe_gemm_kernel":                               "moe",
		"cutlass_80_tensorop_bf16_s16816gemm_relu":            "gemm",
		"rotary_embedding_kernel":                             "rope",
		"topk_softmax_kernel":                                 "softmax",
		"small_kernel":                                        "other",
		"comma_kernel":                                        "other",
		"smallmla_comma_mma_kernel":                           "gemm",
	} {
		want[name] = [2]string{fam, "the spec's ordering"}
	}
	got := families(t, openWarehouse(t), slices.Collect(maps.Keys(want)))
	for name, w := range want {
		if got[name] != w[0] {
			t.Errorf("%s: got %s, want %s (%s)", name, got[name], w[0], w[1])
		}
	}
}

// families classifies names in one statement: kernel_family's rules are
// planned once, not once a name (240 statements were most of
// TestLadderOrder's time).
func families(t *testing.T, db *sql.DB, names []string) map[string]string {
	t.Helper()
	rows, err := db.Query(`SELECT name, kernel_family(name) FROM unnest(?::VARCHAR[]) AS t(name)`, names)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, fam string
		if err := rows.Scan(&name, &fam); err != nil {
			t.Fatal(err)
		}
		out[name] = fam
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(names) {
		t.Fatalf("%d names classified, %d asked", len(out), len(names))
	}
	return out
}

// TestReclassifyAfterRuleChange plays a later migration that changes a rule:
// Classify(all) rewrites exactly the affected rows, and Classify(new only)
// leaves classified rows alone.
func TestReclassifyAfterRuleChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openWarehouse(t)
	insertNames(t, db, []string{"fused_moe_kernel", "nvjet_tst_128x64_64x8_1x2_h_bz_coopA_NTT", "Memset (Device)"})
	if n, err := schema.Classify(ctx, db, false); err != nil || n != 3 {
		t.Fatalf("first classify: %d, %v", n, err)
	}
	if _, err := db.Exec(`UPDATE classifier_rules SET family = 'other' WHERE keyword = 'nvjet'`); err != nil {
		t.Fatal(err)
	}
	if n, err := schema.Classify(ctx, db, false); err != nil || n != 0 {
		t.Fatalf("only-new classify touched %d classified rows, %v", n, err)
	}
	if n, err := schema.Classify(ctx, db, true); err != nil || n != 1 {
		t.Fatalf("reclassify changed %d rows, %v; want 1", n, err)
	}
	if g := classification(t, db)["nvjet_tst_128x64_64x8_1x2_h_bz_coopA_NTT"]; g != [2]string{"other", "other"} {
		t.Fatalf("after the rule change: %v", g)
	}
	// A name inserted later is classified on its own.
	insertNames(t, db, []string{"_fwd_kernel_stage1"})
	if n, err := schema.Classify(ctx, db, false); err != nil || n != 1 {
		t.Fatalf("new name: %d, %v", n, err)
	}
}

// TestClassifyInsideTransaction: ingest classifies on its own connection
// inside its transaction.
func TestClassifyInsideTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openWarehouse(t)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO kernel_names (name_id, name, short_name, base_name) VALUES (1, 'fused_moe_kernel', 'fused_moe_kernel', 'fused_moe_kernel')`); err != nil {
		t.Fatal(err)
	}
	if n, err := schema.Classify(ctx, tx, false); err != nil || n != 1 {
		t.Fatalf("classify in tx: %d, %v", n, err)
	}
	var fam string
	if err := tx.QueryRow(`SELECT family FROM kernel_names WHERE name_id = 1`).Scan(&fam); err != nil || fam != "moe" {
		t.Fatalf("family %q, %v", fam, err)
	}
}

func TestClassifierVersion(t *testing.T) {
	t.Parallel()
	db := openWarehouse(t)
	ci, err := schema.ClassifierVersion(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	var rules int
	db.QueryRow(`SELECT count(*) FROM classifier_rules`).Scan(&rules)
	if ci.Version != 2 || ci.Migration != "0018_classify_call" || ci.Rules != rules {
		t.Fatalf("got %+v, want version 2 from 0018_classify_call with %d rules", ci, rules)
	}
}

// manyNames makes n distinct realistic names: the pinned ones with a
// distinguishing template argument or suffix.
func manyNames(n int) []string {
	out := make([]string, 0, n)
	for i := 0; len(out) < n; i++ {
		p := pinnedNames[i%len(pinnedNames)].name
		out = append(out, fmt.Sprintf("%s<%d>", p, i))
	}
	return out
}

// BenchmarkClassify classifies 5000 distinct realistic names against every
// rule and reports the time per name: thousands of names should classify in
// well under a second.
//
//	go test ./schema -run XXX -bench Classify
func BenchmarkClassify(b *testing.B) {
	ctx := context.Background()
	db := openWarehouse(b)
	// one DuckDB thread per core, as a command gets
	for _, reset := range []string{`RESET external_threads`, `RESET threads`} {
		if _, err := db.ExecContext(ctx, reset); err != nil {
			b.Fatal(err)
		}
	}
	insertNames(b, db, manyNames(5000))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, err := db.ExecContext(ctx, `UPDATE kernel_names SET family = NULL, category = NULL`); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		n, err := schema.Classify(ctx, db, false)
		if err != nil || n != 5000 {
			b.Fatalf("classified %d, %v", n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/5000, "ns/name")
}

// TestKernelCallAndFunction: what the rules see. kernel_call drops the
// final balanced parameter list (nested types included) and nothing else;
// kernel_function also drops every template argument list.
func TestKernelCallAndFunction(t *testing.T) {
	t.Parallel()
	db := openWarehouse(t)
	for _, c := range []struct{ name, call, function string }{
		{"fused_moe_kernel", "fused_moe_kernel", "fused_moe_kernel"},
		{"Memset (Device)", "Memset", "Memset"},
		{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"},
		{"void bounds_check_indices_kernel<long>(at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, long>, long, fbgemm_gpu::FixedDivisor)",
			"void bounds_check_indices_kernel<long>", "void bounds_check_indices_kernel"},
		// template arguments holding parentheses stay: only the last group goes
		{"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, long const*, int)",
			"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>", "void vllm::reshape_and_cache_flash_kernel"},
		// parameters with nested parentheses (a lambda type, a function pointer)
		{"void at::native::vectorized_elementwise_kernel<4, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
			"void at::native::vectorized_elementwise_kernel<4, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >",
			"void at::native::vectorized_elementwise_kernel"},
		{"void f<int>(float (*)(float), int)", "void f<int>", "void f"},
		// no parameter list at the end: unchanged
		{"void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>", "void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>", "void flashinfer::norm::RMSNormKernel"},
	} {
		var call, fn string
		if err := db.QueryRow(`SELECT kernel_call(?), kernel_function(?)`, c.name, c.name).Scan(&call, &fn); err != nil {
			t.Fatal(err)
		}
		if call != c.call || fn != c.function {
			t.Errorf("%s\n  kernel_call %q, want %q\n  kernel_function %q, want %q", c.name, call, c.call, fn, c.function)
		}
	}
}

// TestMigrationReclassifies: a warehouse classified by the rules of 0002
// (FBGEMM kernels gemm by a parameter type) is reclassified by 0018 when
// it migrates.
func TestMigrationReclassifies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ms, err := schema.LoadMigrations(migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	var at int
	for i, m := range ms {
		if m.Name == "classify_call" {
			at = i
		}
	}
	db, err := sql.Open("duckdb", "?threads=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := schema.Migrate(ctx, db, ms[:at]); err != nil {
		t.Fatal(err)
	}
	const fbgemm = "void split_embedding_codegen_forward_unweighted_small_kernel<float, float, float, long>(at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>, long, fbgemm_gpu::FixedDivisor, at::GenericPackedTensorAccessor<float, 2ul, at::RestrictPtrTraits, long>)"
	insertNames(t, db, []string{fbgemm, "fused_moe_kernel"})
	// classified as 0002 does (its last statement): the classifier macros
	// are the SQL library's, which a bare migration leaves out
	st := schema.SplitStatements(ms[1].SQL)
	if _, err := db.ExecContext(ctx, st[len(st)-1].SQL); err != nil {
		t.Fatal(err)
	}
	if g := classification(t, db)[fbgemm]; g[0] != "gemm" {
		t.Fatalf("before 0018: %v (the test no longer shows the old rule)", g)
	}
	if _, err := schema.Migrate(ctx, db, ms); err != nil {
		t.Fatal(err)
	}
	got := classification(t, db)
	if got[fbgemm] != [2]string{"elementwise", "elementwise"} || got["fused_moe_kernel"] != [2]string{"moe", "compute"} {
		t.Fatalf("after 0018: %v", got)
	}
}

// TestFillDisplayNames: rows stored without a display name (a warehouse
// older than migration 0019) get theirs; a second pass changes nothing;
// all=true rewrites a wrong one.
func TestFillDisplayNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openWarehouse(t)
	insertNames(t, db, []string{
		"void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, float, int, int)",
		"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		"_ZN5aiter3mlaILi128EEEvPf",
	})
	if n, err := schema.FillDisplayNames(ctx, db, false); err != nil || n != 3 {
		t.Fatalf("first fill: %d, %v", n, err)
	}
	read := func() map[string]string {
		out := map[string]string{}
		rows, err := db.Query(`SELECT name, display_name FROM kernel_names`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var n, d string
			if err := rows.Scan(&n, &d); err != nil {
				t.Fatal(err)
			}
			out[n] = d
		}
		return out
	}
	want := map[string]string{
		"void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, float, int, int)": "rms_norm_kernel<…>",
		"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)":                                             "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
		"_ZN5aiter3mlaILi128EEEvPf": "mla<…>",
	}
	if got := read(); !maps.Equal(got, want) {
		t.Fatalf("display names %v, want %v", got, want)
	}
	if n, err := schema.FillDisplayNames(ctx, db, false); err != nil || n != 0 {
		t.Fatalf("second fill: %d, %v", n, err)
	}
	if _, err := db.Exec(`UPDATE kernel_names SET display_name = 'stale' WHERE name = '_ZN5aiter3mlaILi128EEEvPf'`); err != nil {
		t.Fatal(err)
	}
	if n, err := schema.FillDisplayNames(ctx, db, false); err != nil || n != 0 {
		t.Fatalf("only-missing fill touched a set name: %d, %v", n, err)
	}
	if n, err := schema.FillDisplayNames(ctx, db, true); err != nil || n != 1 {
		t.Fatalf("fill all: %d, %v; want 1", n, err)
	}
	if got := read(); !maps.Equal(got, want) {
		t.Fatalf("after fill all: %v", got)
	}
}
