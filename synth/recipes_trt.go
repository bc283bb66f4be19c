package synth

import "strconv"

// trtTree is a TensorRT-LLM PyTorch-backend step: cpu_ops and kernels, but
// no python_function events (its profiler does not record stacks).
func trtTree(opt Options, _ modelFamily, stage string) (*stepTree, *builder) {
	b := newBuilder("", "", "")
	dec := stage == StageDecode
	tp := opt.Ranks

	norm := kern(kFusedAddRMSNorm, 36000, 3000).launch(dims(1024, 1, 1), dims(512, 1, 1), 28, 0, 48).withPDL()
	normFirst := kern(kRMSNorm, 34000, 2800).launch(dims(1024, 1, 1), dims(512, 1, 1), 26, 0, 48).withPDL()
	gemmQKV := kern(kGemmXmma128, 230000, 0).launch(dims(48, 32, 1), dims(128, 1, 1), 168, 197632, 6)
	gemmO := kern(kGemmXmma128, 160000, 0).launch(dims(32, 32, 1), dims(128, 1, 1), 168, 197632, 6)
	gemmUp := kern(kNvjetBig, 650000, 0).launch(dims(132, 1, 1), dims(384, 1, 1), 168, 221184, 9)
	gemmDown := kern(kGemmXmma256, 350000, 0).launch(dims(16, 32, 1), dims(256, 1, 1), 168, 221184, 6)
	attn := kern("fmha_v2_flash_attention_bf16_64_128_S_qkv_128_causal_sm90_kernel_nl_tiled", 540000, 0).launch(dims(64, 32, 1), dims(128, 1, 1), 168, 164096, 12).via("cuLaunchKernel")
	if dec {
		gemmQKV = kern(kNvjetQKV, 0, 10900).launch(dims(96, 1, 1), dims(128, 1, 1), 168, 99328, 6)
		gemmO = kern(kNvjetSplitK, 0, 7100).launch(dims(32, 1, 4), dims(128, 1, 1), 168, 132096, 6)
		gemmUp = kern(kNvjetUp, 0, 28100).launch(dims(112, 1, 1), dims(128, 1, 1), 168, 198656, 6)
		gemmDown = kern(kNvjetSplitK, 0, 16400).launch(dims(32, 1, 4), dims(128, 1, 1), 168, 132096, 6)
		attn = kern("xqa_kernel_dt_bf16_d_128_beam_1_kvt_bf16_pagedKV_32_nqpkv_8_m_8_sm_90", 0, 12700).launch(dims(8, 32, 1), dims(128, 1, 1), 128, 50176, 19).via("cuLaunchKernel")
	}
	preproc := kern("void tensorrt_llm::kernels::applyBiasRopeUpdateKVCacheV2<__nv_bfloat16, __nv_bfloat16, 128, false, tensorrt_llm::kernels::KVBlockArray, false, false>(tensorrt_llm::kernels::QKVPreprocessingParams<__nv_bfloat16, tensorrt_llm::kernels::KVBlockArray>)", 42000, 3300).launch(dims(4096, 1, 1), dims(128, 1, 1), 40, 0, 70)
	act := kern(kActAndMulFI, 58000, 3200).launch(dims(4096, 1, 1), dims(1024, 1, 1), 20, 0, 88).withPDL()
	arFusion := kern("void tensorrt_llm::kernels::ar_fusion::allreduce_fusion_kernel_oneshot_lamport<__nv_bfloat16, "+strconv.Itoa(tp)+", true, (tensorrt_llm::kernels::ar_fusion::AllReduceFusionPattern)1>(tensorrt_llm::kernels::ar_fusion::AllReduceFusionParams<__nv_bfloat16>)", 96000, 8600).launch(dims(132, 1, 1), dims(512, 1, 1), 40, 0, 50).withPDL()

	mm := []string{"aten::linear", "aten::matmul", "aten::mm"}
	// residual add + norm: fused into the all-reduce when TP > 1
	addNorm := func() *node {
		if tp > 1 {
			return call(nil, []string{"trtllm::allreduce"}, arFusion)
		}
		return call(nil, []string{"trtllm::flashinfer_fused_add_rmsnorm"}, norm)
	}
	var layers []*node
	for i := 0; i < opt.Layers; i++ {
		in := addNorm()
		if i == 0 {
			in = call(nil, []string{"trtllm::flashinfer_rmsnorm"}, normFirst)
		}
		layers = append(layers, n(nil,
			in,
			call(nil, mm, gemmQKV),
			call(nil, []string{"trtllm::attention"}, preproc, attn),
			call(nil, mm, gemmO),
			addNorm(),
			call(nil, mm, gemmUp),
			call(nil, []string{"trtllm::flashinfer_silu_and_mul"}, act),
			call(nil, mm, gemmDown),
		))
	}
	embed := kern(kIndexSelect, 40000, 2900).launch(dims(1024, 1, 1), dims(128, 4, 1), 30, 0, 60)
	lmHead := kern(kNvjetLogits, 60000, 51000).launch(dims(1002, 1, 1), dims(128, 1, 1), 168, 99328, 6)
	model := n(nil, append(append([]*node{call(nil, []string{"aten::embedding", "aten::index_select"}, embed)}, layers...),
		call(nil, []string{"trtllm::flashinfer_fused_add_rmsnorm"}, norm),
		call(nil, mm, lmHead))...)

	fill := kern(kFillMangled, 1300, 1200).launch(dims(1, 1, 1), dims(128, 1, 1), 16, 0, 3).mayZero()
	prologue := []*node{
		call(nil, []string{"aten::copy_"}, memcpyK(kMemcpyHtoDPin, 8192, 3000, 1600)),
		call(nil, []string{"aten::copy_"}, memcpyK(kMemcpyHtoDPin, 4096, 2100, 1500)),
		call(nil, []string{"aten::fill_"}, fill),
		call(nil, []string{"aten::zero_"}, memsetK(1024, 1100, 1000)),
	}
	topk := kern("void tensorrt_llm::kernels::topKStage1<float, 128, 8>(float const*, float*, int*, float*, tensorrt_llm::kernels::FinishedState const*, int, int const*, int, int, int const*, int, bool const*)", 16000, 15500).launch(dims(32, 8, 1), dims(128, 1, 1), 64, 0, 40)
	argmax := kern(kArgmax, 8800, 8600).launch(dims(32, 1, 1), dims(32, 16, 1), 32, 4096, 25)
	epilogue := []*node{
		call(nil, []string{"trtllm::topk_sampling"}, topk),
		call(nil, []string{"aten::argmax"}, argmax),
		call(nil, []string{"aten::to", "aten::_to_copy", "aten::copy_"}, memcpyK(kMemcpyDtoH, 256, 2000, 1900)),
	}
	epilogue[len(epilogue)-1].leaf.sync = true
	second := call(nil, []string{"aten::to", "aten::_to_copy", "aten::copy_"}, sideCopy(memcpyK(kMemcpyDtoH, 1024, 1800, 1700)))
	second.leaf.sync = true
	st := &stepTree{prologue: prologue, model: model, epilogue: epilogue, second: second}
	return st, b
}
