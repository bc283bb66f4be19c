package synth

import (
	"strconv"
	"strings"
)

// Kernel names shared by several frameworks (as Kineto writes them: most
// demangled, a few left Itanium-mangled).
const (
	kFusedAddRMSNorm    = "void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, unsigned int, float, float)"
	kRMSNorm            = "void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, unsigned int, unsigned int, float, float)"
	kActAndMulFI        = "void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &silu<float> >(__nv_bfloat16*, __nv_bfloat16 const*, int)"
	kRotaryVLLM         = "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, int, int, int)"
	kNCCLAllReduce      = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
	kNCCLAllGather      = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
	kGemmXmma128        = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
	kGemmXmma256        = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"
	kNvjetBig           = "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT"
	kNvjetQKV           = "nvjet_tst_64x8_64x16_4x1_v_bz_TNT"
	kNvjetSplitK        = "nvjet_tst_128x8_64x12_2x1_v_bz_splitK_TNT"
	kNvjetUp            = "nvjet_tst_256x8_64x6_2x1_v_bz_TNT"
	kNvjetLogits        = "nvjet_tst_192x8_64x10_4x1_v_bz_TNN"
	kCutlassO           = "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedCooperative<4, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1> >, cutlass::gemm::KernelTmaWarpSpecializedCooperative>, cute::tuple<cute::C<128>, cute::C<256>, cute::C<64> >, cutlass::bfloat16_t>, cutlass::epilogue::collective::DefaultEpilogue<cutlass::bfloat16_t>, void> >(cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int> >::Params)"
	kCutlassReluMangled = "_ZN7cutlass7Kernel2I66cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8EEvNT_6ParamsE"
	kFillMangled        = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"
	kAiterMangled       = "_ZN5aiter24add_rmsnorm_quant_kernelIN3c108BFloat16ELi256ELi8EEEvPT_PKS3_S6_fi"
	kAddElementwise     = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)"
	kIndexSelect        = "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)"
	kScan               = "void at::native::(anonymous namespace)::tensor_kernel_scan_innermost_dim<int, std::plus<int> >(int*, int const*, unsigned int, unsigned int, int, std::plus<int>)"
	kSoftmax            = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)"
	kArgmax             = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4> >(at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4>)"
	kTopKSampling       = "void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u, (cub::CUB_200700_900_NS::BlockScanAlgorithm)0, (cub::CUB_200700_900_NS::BlockReduceAlgorithm)2, 4u, false, float, int>(float*, int*, bool*, int*, int*, float*, float*, unsigned int, unsigned long, unsigned long)"
	kGatherTopK         = "void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(at::cuda::detail::TensorInfo<float const, unsigned int>, unsigned int, unsigned int, bool, unsigned int, unsigned int, at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int)"
	kFusedMoE           = "fused_moe_kernel"
	kTritonQuant        = "_per_token_group_quant_fp8"
	kMemcpyHtoD         = "Memcpy HtoD (Pageable -> Device)"
	kMemcpyHtoDPin      = "Memcpy HtoD (Pinned -> Device)"
	kMemcpyDtoH         = "Memcpy DtoH (Device -> Pinned)"
	kMemcpyDtoD         = "Memcpy DtoD (Device -> Device)"
)

// modelFamily picks layer structure and class names from the model path.
type modelFamily struct {
	name     string // llama | qwen | deepseek
	file     string // models/<file>.py
	causalLM string
	model    string
	layer    string
	attn     string
	mlp      string
	moe      string
}

func familyOf(model string, moe bool) modelFamily {
	m := strings.ToLower(model)
	switch {
	case strings.Contains(m, "deepseek"):
		return modelFamily{"deepseek", "deepseek_v2", "DeepseekV3ForCausalLM", "DeepseekV2Model",
			"DeepseekV2DecoderLayer", "DeepseekV2AttentionMLA", "DeepseekV2MLP", "DeepseekV2MoE"}
	case strings.Contains(m, "qwen") && moe:
		return modelFamily{"qwen", "qwen3_moe", "Qwen3MoeForCausalLM", "Qwen3MoeModel",
			"Qwen3MoeDecoderLayer", "Qwen3MoeAttention", "Qwen3MoeMLP", "Qwen3MoeSparseMoeBlock"}
	case strings.Contains(m, "qwen"):
		return modelFamily{"qwen", "qwen3", "Qwen3ForCausalLM", "Qwen3Model",
			"Qwen3DecoderLayer", "Qwen3Attention", "Qwen3MLP", ""}
	default:
		return modelFamily{"llama", "llama", "LlamaForCausalLM", "LlamaModel",
			"LlamaDecoderLayer", "LlamaAttention", "LlamaMLP", ""}
	}
}

// recipeFor builds the step tree of one stage ("prefill", "decode"; mixed
// steps use the prefill tree).
func recipeFor(opt Options, stage string, sms int) *stepTree {
	fam := familyOf(opt.Model, opt.MoE)
	var st *stepTree
	var b *builder
	switch opt.Framework {
	case VLLM:
		st, b = vllmTree(opt, fam, stage)
	case TRTLLM:
		st, b = trtTree(opt, fam, stage)
	default:
		st, b = sglangTree(opt, fam, stage)
	}
	finish(b, st, sms, opt.Edits)
	return st
}

// tritonFrames are the frames between a Triton kernel's Python caller and
// its launch (no cpu_op: Triton launches straight from Python).
func (b *builder) tritonFrames() []string {
	if b.noPython() {
		return nil
	}
	return []string{b.sp("triton/runtime/jit.py(390): <lambda>"), b.sp("triton/runtime/jit.py(617): run"),
		b.builtin("method launch of PyCapsule object at 0x7f3e8c2d4a10")}
}

// sglangTree is SGLang's step (and TokenSpeed's, which derives from it).
func sglangTree(opt Options, fam modelFamily, stage string) (*stepTree, *builder) {
	ts := opt.Framework == TokenSpeed
	root, pkg, kop := "/sgl-workspace/sglang/", "python/sglang/srt/", "sgl_kernel::"
	if ts {
		root, pkg, kop = "/workspace/tokenspeed/", "python/tokenspeed/runtime/", "tokenspeed_kernel::"
	}
	b := newBuilder(root, pkg, "/usr/local/lib/python3.12/dist-packages/")
	p := func(rel string) string { return b.py(pkg + rel) }
	w := func(rel string) string { return b.wrap(pkg + rel) }
	dec := stage == StageDecode
	tp := opt.Ranks
	mfile := "models/" + fam.file + ".py"

	// Kernels of this stage, shared by every layer.
	norm := kern(kFusedAddRMSNorm, 38000, 3100).launch(dims(1024, 1, 1), dims(512, 1, 1), 28, 0, 48)
	normFirst := kern(kRMSNorm, 36000, 2900).launch(dims(1024, 1, 1), dims(512, 1, 1), 26, 0, 48)
	normPDL := kern(kFusedAddRMSNorm, 38000, 3100).launch(dims(1024, 1, 1), dims(512, 1, 1), 28, 0, 48).withPDL()
	gemmQKV := kern(kGemmXmma128, 245000, 0).launch(dims(48, 32, 1), dims(128, 1, 1), 168, 197632, 6)
	gemmO := kern(kCutlassO, 168000, 0).launch(dims(132, 1, 1), dims(384, 1, 1), 168, 215040, 9)
	gemmUp := kern(kNvjetBig, 690000, 0).launch(dims(132, 1, 1), dims(384, 1, 1), 168, 221184, 9)
	gemmDown := kern(kGemmXmma256, 190000, 0).launch(dims(16, 32, 1), dims(256, 1, 1), 168, 221184, 6)
	if dec {
		gemmQKV = kern(kNvjetQKV, 0, 11800).launch(dims(96, 1, 1), dims(128, 1, 1), 168, 99328, 6)
		gemmO = kern(kNvjetSplitK, 0, 7600).launch(dims(32, 1, 4), dims(128, 1, 1), 168, 132096, 6)
		gemmUp = kern(kNvjetUp, 0, 29500).launch(dims(112, 1, 1), dims(128, 1, 1), 168, 198656, 6)
		gemmDown = kern(kNvjetSplitK, 0, 17300).launch(dims(32, 1, 4), dims(128, 1, 1), 168, 132096, 6)
	}
	rope := kern(kRotaryVLLM, 24000, 2100).launch(dims(4096, 1, 1), dims(256, 1, 1), 32, 0, 72)
	storeKV := kern("void (anonymous namespace)::store_kvcache<8, 128, c10::BFloat16>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, long const*, long, long, long)", 21000, 1900).launch(dims(512, 1, 1), dims(128, 1, 1), 24, 0, 60)
	attn := kern("void flashinfer::BatchPrefillWithRaggedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::MaskMode)1, 128u, 1u, 4u, 8u, 8u, 1u, 4u, (flashinfer::PosEncodingMode)0, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, int, flashinfer::DefaultAttention<false, false, false, false> >, flashinfer::RaggedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> >(flashinfer::RaggedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)", 610000, 0).launch(dims(32, 16, 1), dims(32, 1, 4), 128, 99328, 12)
	if dec {
		attn = kern("void flashinfer::BatchDecodeWithPagedKVCacheKernel<flashinfer::DefaultAttention<false, false, false, false>, (flashinfer::PosEncodingMode)0, 2u, 4u, 8u, 16u, 1u, 8u, flashinfer::BatchDecodeParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> >(flashinfer::BatchDecodeParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)", 0, 14600).launch(dims(32, 4, 1), dims(16, 4, 1), 64, 34816, 25)
	}
	act := kern(kActAndMulFI, 62000, 3300).launch(dims(4096, 1, 1), dims(1024, 1, 1), 20, 0, 88)
	// Decode all-reduce: the custom one-shot kernel on the compute stream,
	// followed at once by the residual norm (the chain FlashInfer fuses).
	customAR := kern("void cross_device_reduce_1stage<__nv_bfloat16, "+strconv.Itoa(tp)+">(RankData*, RankSignals, Signal*, __nv_bfloat16*, int, int)", 0, 7900).launch(dims(132, 1, 1), dims(512, 1, 1), 40, 0, 50).via("cudaLaunchKernelExC")
	// Prefill all-reduce: NCCL on its own stream, overlapping the next GEMM.
	ncclAR := kern(kNCCLAllReduce, 148000, 0).launch(dims(4, 1, 1), dims(640, 1, 1), 96, 0, 2).on(sComm).collective("allreduce")
	tritonQuant := kern(kTritonQuant, 16000, 2400).launch(dims(4096, 1, 1), dims(128, 1, 1), 24, 0, 62).via("cuLaunchKernel")

	linear := func(class string, g *kspec, bias bool) *node {
		ops := []string{"aten::linear", "aten::matmul", "aten::mm"}
		if bias {
			ops = []string{"aten::linear", "aten::addmm"}
		}
		return call(fr(b.mod(class), p("layers/linear.py(1386): forward"), p("layers/quantization/unquant.py(131): apply"),
			b.builtin("function linear")), ops, g)
	}
	fp8Linear := func(class string, g *kspec, q *kspec) *node {
		return n(fr(b.mod(class), p("layers/linear.py(1386): forward"), p("layers/quantization/fp8.py(612): apply"),
			p("layers/quantization/fp8_utils.py(478): apply_w8a8_block_fp8_linear")),
			call(fr(p("layers/quantization/fp8_kernel.py(401): sglang_per_token_group_quant_fp8"), b.tritonFrames()), nil, q),
			call(fr(p("layers/quantization/fp8_utils.py(212): deepgemm_w8a8_block_fp8_linear_with_fallback"), b.opCall()),
				[]string{kop + "fp8_blockwise_scaled_mm"}, g))
	}
	rmsNorm := func(k *kspec, fused bool) *node {
		op, line := kop+"rmsnorm", "layers/layernorm.py(136): forward_cuda"
		if fused {
			op, line = kop+"fused_add_rmsnorm", "layers/layernorm.py(142): forward_cuda"
		}
		return call(fr(b.mod("RMSNorm"), p("custom_op.py(57): forward"), p(line), b.opCall()), []string{op}, k)
	}
	allReduce := func() *node {
		if tp < 2 {
			return nil
		}
		if dec {
			return n(fr(p("distributed/communication_op.py(13): tensor_model_parallel_all_reduce"),
				p("distributed/parallel_state.py(557): all_reduce"), p("distributed/parallel_state.py(652): _all_reduce_out_place")),
				call(fr(p("distributed/device_communicators/custom_all_reduce.py(405): custom_all_reduce"), b.opCall()),
					[]string{kop + "all_reduce"}, customAR))
		}
		nd := call(fr(p("distributed/communication_op.py(13): tensor_model_parallel_all_reduce"),
			p("distributed/parallel_state.py(557): all_reduce"), p("distributed/parallel_state.py(637): _all_reduce_in_place"),
			b.tp("torch/distributed/c10d_logger.py(81): wrapper"), b.tp("torch/distributed/distributed_c10d.py(2939): all_reduce")),
			[]string{"c10d::allreduce_", "record_param_comms", "nccl:all_reduce"}, ncclAR)
		nd.leaf.comm = true
		return nd
	}
	postNorm := func() *node {
		k := norm
		if tp >= 2 && dec {
			k = normPDL // FlashInfer PDL: starts while the all-reduce drains
		}
		if tp >= 2 && !dec {
			c := *norm
			c.join = true // needs the NCCL result
			k = &c
		}
		return rmsNorm(k, true)
	}
	ar := func() []*node {
		if x := allReduce(); x != nil {
			return []*node{x}
		}
		return nil
	}

	// Attention block.
	var attnBlock *node
	if fam.name == "deepseek" {
		ropeFI := kern("void flashinfer::BatchQKApplyRotaryPosIdsCosSinCache<true, 64u, 8u, 16u, __nv_bfloat16, long>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, float*, long*, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int)", 21000, 2300).launch(dims(512, 1, 1), dims(128, 1, 1), 40, 0, 55)
		mlaStore := kern("void (anonymous namespace)::set_mla_kv_buffer_kernel<64>(__nv_bfloat16*, __nv_bfloat16 const*, __nv_bfloat16 const*, long const*, int, int, int)", 16000, 1700).launch(dims(256, 1, 1), dims(64, 1, 1), 24, 0, 50)
		dg := func(name string, p, d int64) *kspec {
			return kern(name, p, d).launch(dims(148, 1, 1), dims(384, 1, 1), 168, 222208, 9).via("cuLaunchKernel")
		}
		qa := dg("void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0, 0u, 2112u, 7168u, 128u, 112u, 128u, 1u, 4u, 2u, 32u, 128u, 128u, 148u, 1u, false, (deep_gemm::GemmType)0, false, cutlass::bfloat16_t>(int*, unsigned int, unsigned int, unsigned int, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap)", 210000, 9800)
		qb := dg("void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0, 0u, 24576u, 1536u, 128u, 192u, 128u, 1u, 4u, 2u, 32u, 128u, 128u, 148u, 1u, false, (deep_gemm::GemmType)0, false, cutlass::bfloat16_t>(int*, unsigned int, unsigned int, unsigned int, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap)", 330000, 13100)
		oproj := dg("void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0, 0u, 7168u, 16384u, 128u, 112u, 128u, 1u, 4u, 2u, 32u, 128u, 128u, 148u, 1u, false, (deep_gemm::GemmType)0, false, cutlass::bfloat16_t>(int*, unsigned int, unsigned int, unsigned int, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap)", 280000, 12400)
		bmm := kern("nvjet_tst_64x32_64x16_2x1_v_bz_bias_TNN", 88000, 6100).launch(dims(128, 1, 1), dims(128, 1, 1), 168, 99328, 6)
		qnorm := kern(kAiterMangled, 14000, 2000).launch(dims(1024, 1, 1), dims(256, 1, 1), 32, 0, 50)
		mla := kern("void flashinfer::BatchPrefillWithRaggedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::MaskMode)1, 128u, 1u, 4u, 8u, 8u, 1u, 4u, (flashinfer::PosEncodingMode)0, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, long, flashinfer::DefaultAttention<false, false, false, false> >, flashinfer::RaggedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, long> >(flashinfer::RaggedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, long>)", 720000, 0).launch(dims(32, 128, 1), dims(32, 1, 4), 128, 99328, 12)
		var attnKern []*node
		if dec {
			s1 := kern("_fwd_kernel_stage1", 0, 21700).launch(dims(32, 16, 8), dims(128, 1, 1), 255, 98304, 12).via("cuLaunchKernel")
			s2 := kern("_fwd_kernel_stage2", 0, 3900).launch(dims(32, 16, 1), dims(128, 1, 1), 64, 0, 25).via("cuLaunchKernel")
			attnKern = []*node{
				call(fr(p("layers/attention/triton_ops/decode_attention.py(702): decode_attention_fwd_grouped"),
					p("layers/attention/triton_ops/decode_attention.py(420): _decode_grouped_att_m_fwd"), b.tritonFrames()), nil, s1),
				call(fr(p("layers/attention/triton_ops/decode_attention.py(540): _decode_softmax_reducev_fwd"), b.tritonFrames()), nil, s2),
			}
		} else {
			attnKern = []*node{call(fr(p("layers/attention/flashinfer_mla_backend.py(430): forward_extend"),
				b.sp("flashinfer/prefill.py(2144): run")), nil, mla)}
		}
		attnBlock = n(fr(b.mod(fam.attn), p(mfile+"(1321): forward"), p(mfile+"(1498): forward_absorb_prepare")),
			fp8Linear("ReplicatedLinear", qa, tritonQuant),
			call(fr(b.mod("RMSNorm"), p("custom_op.py(57): forward"), p("layers/layernorm.py(136): forward_cuda"), b.opCall()), []string{kop + "add_rmsnorm_quant"}, qnorm),
			rmsNorm(normFirst, false),
			fp8Linear("ColumnParallelLinear", qb, tritonQuant),
			call(fr(b.builtin("method bmm of type object at 0x7f3ea1b2c040")), []string{"aten::bmm"}, bmm),
			call(fr(b.mod("DeepseekScalingRotaryEmbedding"), p("layers/rotary_embedding.py(741): forward_cuda"), b.opCall()),
				[]string{kop + "apply_rope_pos_ids_cos_sin_cache"}, ropeFI),
			n(fr(b.mod("RadixAttention"), p("layers/radix_attention.py(108): forward"), p("layers/attention/base_attn_backend.py(88): forward")),
				append([]*node{call(fr(p("mem_cache/memory_pool.py(1204): set_mla_kv_buffer"), b.opCall()), []string{kop + "set_mla_kv_buffer"}, mlaStore)}, attnKern...)...),
			call(fr(b.builtin("method bmm of type object at 0x7f3ea1b2c040")), []string{"aten::bmm"}, bmm),
			n(fr(p(mfile+"(1580): forward_absorb_core")), append([]*node{fp8Linear("RowParallelLinear", oproj, tritonQuant)}, ar()...)...),
		)
	} else {
		qkvBias := fam.name == "qwen"
		kids := []*node{linear("QKVParallelLinear", gemmQKV, qkvBias)}
		if fam.name == "qwen" {
			kids = append(kids, rmsNorm(normFirst, false), rmsNorm(normFirst, false)) // q_norm, k_norm
		}
		attnKernNode := call(fr(p("layers/attention/flashinfer_backend.py(812): forward_decode"), b.sp("flashinfer/decode.py(1226): run")), nil, attn)
		if !dec {
			attnKernNode = call(fr(p("layers/attention/flashinfer_backend.py(731): forward_extend"), b.sp("flashinfer/prefill.py(2144): run")), nil, attn)
		}
		kids = append(kids,
			call(fr(b.mod("RotaryEmbedding"), p("custom_op.py(57): forward"), p("layers/rotary_embedding.py(215): forward_cuda"), b.opCall()),
				[]string{kop + "rotary_embedding"}, rope),
			n(fr(b.mod("RadixAttention"), p("layers/radix_attention.py(108): forward"), p("layers/attention/base_attn_backend.py(88): forward")),
				call(fr(p("mem_cache/memory_pool.py(612): set_kv_buffer"), p("mem_cache/memory_pool.py(588): store_cache"), b.opCall()),
					[]string{kop + "store_kvcache"}, storeKV),
				attnKernNode),
			linear("RowParallelLinear", gemmO, false))
		kids = append(kids, ar()...)
		attnBlock = n(fr(b.mod(fam.attn), p(mfile+"(198): forward")), kids...)
	}

	// MLP / MoE block.
	mlpBlock := func(dense bool) *node {
		if dense || !opt.MoE {
			if fam.name == "deepseek" {
				up := kern("void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0, 0u, 36864u, 7168u, 128u, 224u, 128u, 1u, 4u, 2u, 32u, 128u, 128u, 148u, 1u, false, (deep_gemm::GemmType)0, false, cutlass::bfloat16_t>(int*, unsigned int, unsigned int, unsigned int, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap)", 640000, 27000).launch(dims(148, 1, 1), dims(384, 1, 1), 168, 222208, 9).via("cuLaunchKernel")
				down := kern("void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0, 0u, 7168u, 18432u, 128u, 112u, 128u, 1u, 4u, 2u, 32u, 128u, 128u, 148u, 1u, false, (deep_gemm::GemmType)0, false, cutlass::bfloat16_t>(int*, unsigned int, unsigned int, unsigned int, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap)", 330000, 15800).launch(dims(148, 1, 1), dims(384, 1, 1), 168, 222208, 9).via("cuLaunchKernel")
				// gate_up GEMM -> silu_and_mul -> per-token-group fp8 quant -> down GEMM
				return n(fr(b.mod(fam.mlp), p(mfile+"(226): forward")),
					fp8Linear("MergedColumnParallelLinear", up, tritonQuant),
					call(fr(b.mod("SiluAndMul"), p("custom_op.py(57): forward"), p("layers/activation.py(67): forward_cuda"), b.opCall()), []string{kop + "silu_and_mul"}, act),
					n(fr(b.mod("RowParallelLinear"), p("layers/linear.py(1386): forward"), p("layers/quantization/fp8.py(612): apply")),
						call(fr(p("layers/quantization/fp8_kernel.py(401): sglang_per_token_group_quant_fp8"), b.tritonFrames()), nil, tritonQuant),
						call(fr(p("layers/quantization/fp8_utils.py(212): deepgemm_w8a8_block_fp8_linear_with_fallback"), b.opCall()), []string{kop + "fp8_blockwise_scaled_mm"}, down)),
					n(nil, ar()...))
			}
			kids := []*node{linear("MergedColumnParallelLinear", gemmUp, false),
				call(fr(b.mod("SiluAndMul"), p("custom_op.py(57): forward"), p("layers/activation.py(67): forward_cuda"), b.opCall()), []string{kop + "silu_and_mul"}, act)}
			if tp >= 2 && !dec {
				// Split the down projection so the first half's NCCL
				// all-reduce overlaps the second half's GEMM.
				half := *gemmDown
				half.durP /= 2
				halfAR := *ncclAR
				halfAR.durP /= 2
				arHalf := func() *node {
					nd := allReduce()
					nd.leaf.ks = []*kspec{&halfAR}
					return nd
				}
				kids = append(kids, linear("RowParallelLinear", &half, false), arHalf(), linear("RowParallelLinear", &half, false), arHalf())
			} else {
				kids = append(kids, linear("RowParallelLinear", gemmDown, false))
				kids = append(kids, ar()...)
			}
			return n(fr(b.mod(fam.mlp), p(mfile+"(104): forward")), kids...)
		}
		// MoE: router GEMM, top-k, align, two grouped GEMMs with the
		// activation between them, the reduce; DeepSeek adds fp8 quant and
		// shared experts on the aux stream.
		gate := kern("nvjet_tst_64x8_64x16_4x1_v_bz_TNN", 21000, 4100).launch(dims(8, 1, 1), dims(128, 1, 1), 168, 99328, 6)
		topkName, topkOp := "void vllm::moe::topkGatingSoftmax<4, 128, 4, 16, 32, int, float>(float const*, bool const*, float*, int, int*, int*, int, int, int)", kop+"topk_softmax"
		if fam.name == "deepseek" {
			topkName, topkOp = "void moe_fused_gate_kernel<float, 256, 8, 4, 8>(void*, void*, float*, int*, long, long, long, long, double)", kop+"moe_fused_gate"
		}
		topk := kern(topkName, 15000, 3300).launch(dims(64, 1, 1), dims(128, 1, 1), 40, 0, 30)
		align := kern("void moe_align_block_size_kernel<int>(int const*, int*, int*, int*, int, int, int, int, unsigned long, int*)", 9000, 4200).launch(dims(1, 1, 1), dims(1024, 1, 1), 32, 8192, 3)
		sortTok := kern("void count_and_sort_expert_tokens_kernel<int>(int const*, int*, int*, unsigned long)", 6000, 2100).launch(dims(132, 1, 1), dims(256, 1, 1), 20, 0, 30)
		w13 := kern(kFusedMoE, 820000, 41000).launch(dims(2048, 1, 1), dims(128, 1, 1), 255, 81920, 12).via("cuLaunchKernel")
		w2 := kern(kFusedMoE, 430000, 23000).launch(dims(1024, 1, 1), dims(128, 1, 1), 255, 81920, 12).via("cuLaunchKernel")
		sum := kern("void moe_sum_reduce_kernel<c10::BFloat16, 8>(c10::BFloat16 const*, c10::BFloat16*, long, long, long, double)", 31000, 3400).launch(dims(1024, 1, 1), dims(256, 1, 1), 30, 0, 70)
		fm := func(rel string) string { return p("layers/moe/fused_moe_triton/" + rel) }
		inner := []*node{
			call(fr(fm("fused_moe.py(1489): moe_align_block_size"), b.opCall()), []string{kop + "moe_align_block_size"}, align, sortTok),
		}
		if fam.name == "deepseek" {
			inner = append(inner, call(fr(p("layers/quantization/fp8_kernel.py(401): sglang_per_token_group_quant_fp8"), b.tritonFrames()), nil, tritonQuant))
		}
		inner = append(inner,
			call(fr(fm("fused_moe.py(688): invoke_fused_moe_kernel"), b.tritonFrames()), nil, w13),
			call(fr(b.opCall()), []string{kop + "silu_and_mul"}, act))
		if fam.name == "deepseek" {
			inner = append(inner, call(fr(p("layers/quantization/fp8_kernel.py(401): sglang_per_token_group_quant_fp8"), b.tritonFrames()), nil, tritonQuant))
		}
		inner = append(inner,
			call(fr(fm("fused_moe.py(688): invoke_fused_moe_kernel"), b.tritonFrames()), nil, w2),
			call(fr(b.opCall()), []string{kop + "moe_sum_reduce"}, sum))
		kids := []*node{
			call(fr(b.mod("ReplicatedLinear"), p("layers/linear.py(290): forward"), b.builtin("function linear")), []string{"aten::linear", "aten::mm"}, gate),
			call(fr(b.mod("TopK"), p("custom_op.py(57): forward"), p("layers/moe/topk.py(244): forward_cuda"), b.opCall()), []string{topkOp}, topk),
		}
		if fam.name == "deepseek" {
			// Shared experts on the aux stream, overlapping the routed ones.
			sUp := kern("nvjet_tst_128x64_64x8_2x1_v_bz_TNT", 120000, 8800).launch(dims(64, 1, 1), dims(256, 1, 1), 168, 198656, 6).on(sAux)
			sAct := kern(kActAndMulFI, 9000, 2200).launch(dims(512, 1, 1), dims(1024, 1, 1), 20, 0, 80)
			sAct.stream = sAux
			sDown := kern("nvjet_tst_64x64_64x8_2x1_v_bz_TNT", 70000, 6900).launch(dims(64, 1, 1), dims(256, 1, 1), 168, 198656, 6)
			sDown.stream = sAux
			kids = append(kids, n(fr(b.mod(fam.mlp), p(mfile+"(226): forward"), b.tp("torch/cuda/streams.py(53): __enter__")),
				linear("MergedColumnParallelLinear", sUp, false),
				call(fr(b.mod("SiluAndMul"), p("custom_op.py(57): forward"), p("layers/activation.py(67): forward_cuda"), b.opCall()), []string{kop + "silu_and_mul"}, sAct),
				linear("RowParallelLinear", sDown, false)))
		}
		kids = append(kids, n(fr(b.mod("FusedMoE"), fm("layer.py(842): forward"), fm("fused_moe.py(1602): fused_experts_impl")), inner...))
		if fam.name == "deepseek" {
			add := kern(kAddElementwise, 19000, 1800).launch(dims(1024, 1, 1), dims(128, 1, 1), 20, 0, 85).joins()
			kids = append(kids, call(fr(b.builtin("method add_ of Tensor object at 0x7f3e9a1c5e80")), []string{"aten::add_"}, add))
		}
		kids = append(kids, ar()...)
		return n(fr(b.mod(fam.moe), p(mfile+"(402): forward")), kids...)
	}

	var layers []*node
	for i := 0; i < opt.Layers; i++ {
		in := rmsNorm(norm, true)
		if i == 0 {
			in = rmsNorm(normFirst, false)
		} else if tp >= 2 && !dec {
			c := *norm
			c.join = true
			in = rmsNorm(&c, true)
		}
		dense := fam.name == "deepseek" && i < 3 && opt.Layers > 3
		layers = append(layers, n(fr(b.mod(fam.layer), p(mfile+"(340): forward")), in, attnBlock, postNorm(), mlpBlock(dense)))
		// Blocks hold per-layer module names: rebuild them for the next layer.
		if i+1 < opt.Layers {
			attnBlock = rebuildNames(b, attnBlock)
		}
	}

	embed := kern(kIndexSelect, 42000, 3000).launch(dims(1024, 1, 1), dims(128, 4, 1), 30, 0, 60)
	finalNorm := rmsNorm(norm, true)
	lmHead := kern(kNvjetLogits, 61000, 52000).launch(dims(1002, 1, 1), dims(128, 1, 1), 168, 99328, 6)
	if !dec {
		lmHead = kern(kCutlassReluMangled, 74000, 0).launch(dims(1002, 1, 1), dims(128, 1, 1), 168, 99328, 6)
	}
	logitsKids := []*node{call(fr(p("layers/logits_processor.py(561): _get_logits"), b.builtin("method matmul of Tensor object at 0x7f3e9b0c2d70")), []string{"aten::matmul", "aten::mm"}, lmHead)}
	if tp >= 2 {
		ag := kern(kNCCLAllGather, 19000, 14000).launch(dims(2, 1, 1), dims(640, 1, 1), 96, 0, 2).on(sComm).collective("allgather")
		nd := call(fr(p("distributed/communication_op.py(21): tensor_model_parallel_all_gather"), p("distributed/parallel_state.py(761): all_gather"),
			b.tp("torch/distributed/c10d_logger.py(81): wrapper"), b.tp("torch/distributed/distributed_c10d.py(4033): all_gather_into_tensor")),
			[]string{"c10d::_allgather_base_", "record_param_comms", "nccl:_all_gather_base"}, ag)
		nd.leaf.comm = true
		logitsKids = append(logitsKids, nd)
	}
	modelKids := []*node{call(fr(b.mod("VocabParallelEmbedding"), p("layers/vocab_parallel_embedding.py(487): forward"), b.builtin("function embedding")),
		[]string{"aten::embedding", "aten::index_select"}, embed)}
	modelKids = append(modelKids, layers...)
	modelKids = append(modelKids, finalNorm)
	model := n(fr(b.mod(fam.causalLM), p(mfile+"(471): forward"), b.tp("torch/utils/_contextlib.py(120): decorate_context")),
		n(fr(b.mod(fam.model), p(mfile+"(379): forward")), modelKids...),
		n(fr(b.mod("LogitsProcessor"), p("layers/logits_processor.py(324): forward")), logitsKids...))

	tokBytes := int64(16384)
	if dec {
		tokBytes = 256
	}
	fill := kern(kFillMangled, 1400, 1300).launch(dims(1, 1, 1), dims(128, 1, 1), 16, 0, 3).mayZero()
	scan := kern(kScan, 3100, 2800).launch(dims(1, 1, 1), dims(16, 32, 1), 30, 0, 1)
	prologue := []*node{
		n(fr(p("model_executor/forward_batch_info.py(338): init_new")),
			call(fr(b.builtin("method to of Tensor object at 0x7f3e9b0c1f30")), []string{"aten::to", "aten::_to_copy", "aten::copy_"},
				memcpyK(kMemcpyHtoD, tokBytes, 4200, 1900)),
			call(fr(b.builtin("method zeros of type object at 0x7f3ea1b2c040")), []string{"aten::zeros", "aten::zero_"}, memsetK(4096, 1200, 1100)),
			call(fr(b.builtin("method fill_ of Tensor object at 0x7f3e9b0c2a10")), []string{"aten::fill_"}, fill)),
		n(fr(p("layers/attention/flashinfer_backend.py(402): init_forward_metadata")),
			call(fr(b.builtin("method cumsum of type object at 0x7f3ea1b2c040")), []string{"aten::cumsum"}, scan),
			call(fr(b.sp("flashinfer/decode.py(902): plan")), []string{"aten::copy_"}, memcpyK(kMemcpyHtoDPin, 2048, 1800, 1700))),
	}
	sample := kern(kTopKSampling, 28000, 26000).launch(dims(32, 1, 1), dims(1024, 1, 1), 64, 14336, 50)
	epilogue := []*node{
		n(fr(b.mod("Sampler"), p("layers/sampler.py(86): forward")),
			call(fr(b.builtin("method softmax of Tensor object at 0x7f3e9b0c3b00")), []string{"aten::softmax", "aten::_softmax"},
				kern(kSoftmax, 23000, 21000).launch(dims(32, 1, 1), dims(1024, 1, 1), 30, 0, 50)),
			call(fr(p("layers/sampler.py(178): top_k_top_p_min_p_sampling_from_probs_torch"), b.sp("flashinfer/sampling.py(917): top_k_top_p_sampling_from_probs")), nil, sample)),
		call(fr(p("managers/scheduler.py(1902): _copy_next_token_ids"), b.builtin("method tolist of Tensor object at 0x7f3e9b0c4c20")),
			[]string{"aten::to", "aten::_to_copy", "aten::copy_"}, memcpyK(kMemcpyDtoH, 256, 2100, 2000)),
	}
	epilogue[len(epilogue)-1].leaf.sync = true

	second := call(fr(p("managers/scheduler_output_processor_mixin.py(213): process_batch_result_decode"), b.builtin("method to of Tensor object at 0x7f3e9b0c5d40")),
		[]string{"aten::to", "aten::_to_copy", "aten::copy_"}, sideCopy(memcpyK(kMemcpyDtoH, 1024, 1900, 1800)))
	second.leaf.sync = true

	st := &stepTree{
		outer: fr(b.std("multiprocessing/process.py(314): _bootstrap"), b.std("multiprocessing/process.py(108): run"),
			w("managers/scheduler.py(2956): run_scheduler_process"), b.tp("torch/utils/_contextlib.py(120): decorate_context"),
			w("managers/scheduler.py(1037): event_loop_normal")),
		outer2: fr(b.std("threading.py(1075): _bootstrap_inner"), b.std("threading.py(1012): run"),
			w("managers/scheduler.py(1102): output_thread_loop")),
		pre: fr(w("managers/scheduler.py(1850): run_batch"), w("managers/tp_worker.py(236): forward_batch_generation"),
			w("model_executor/model_runner.py(2089): forward"), w("model_executor/model_runner.py(2131): _forward_raw"),
			w("model_executor/model_runner.py(2003): forward_"+map[bool]string{true: "decode", false: "extend"}[dec])),
		annoAt:   1,
		prologue: prologue,
		model:    model,
		graph: fr(w("model_executor/cuda_graph_runner.py(812): replay"), b.tp("torch/cuda/graphs.py(118): replay"),
			b.builtin("method replay of CUDAGraph object at 0x7f3e7c4d2e90")),
		epilogue: epilogue,
		second:   second,
	}
	return st, b
}

// sideCopy marks a copy as running on the aux stream without waiting for
// the compute stream (a copy of the previous step's results).
func sideCopy(k *kspec) *kspec {
	k.stream = sAux
	return k
}

// rebuildNames returns a copy of nd whose nn.Module frames get fresh
// instance numbers, as the next layer's modules have.
func rebuildNames(b *builder, nd *node) *node {
	c := &node{leaf: nd.leaf, ops: nd.ops}
	c.frames = make([]string, len(nd.frames))
	for i, f := range nd.frames {
		if cls, ok := strings.CutPrefix(f, "nn.Module: "); ok {
			if j := strings.LastIndexByte(cls, '_'); j > 0 {
				cls = cls[:j]
			}
			f = "nn.Module: " + cls + "_" + strconv.Itoa(b.counts[cls])
			b.counts[cls]++
		}
		c.frames[i] = f
	}
	if nd.leaf != nil {
		l := *nd.leaf
		c.leaf = &l
	}
	for _, k := range nd.kids {
		c.kids = append(c.kids, rebuildNames(b, k))
	}
	return c
}

// finish resolves attribution sites and prepares each kspec's text.
func finish(b *builder, st *stepTree, sms int, edits []Edit) {
	all := append(append(append([]*node{}, st.prologue...), st.model), st.epilogue...)
	if st.second != nil {
		all = append(all, st.second)
	}
	applyEdits(edits, all)
	for _, nd := range all {
		b.resolveSites(nd, "")
		walkKernels(nd, func(k *kspec) { prepareKSpec(k, sms) })
	}
	// Frames of the outer loops and runners hold no kernels of their own;
	// resolveSites above started below them, which is what ingest sees
	// after skipping wrappers.
}
